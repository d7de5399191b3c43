/* The floor for `gpuenv probe`: the least a program can do to learn the driver
 * and GPU facts through NVML (dlopen, init, driver and CUDA versions, per-GPU
 * name, compute capability and memory, shutdown).  Prints one line per GPU. */
#include <dlfcn.h>
#include <stdio.h>

typedef struct {
	unsigned long long total, free, used;
} mem_t;

int main(void)
{
	void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "no NVML: %s\n", dlerror());
		return 1;
	}
	int (*init)(void) = (int (*)(void))dlsym(h, "nvmlInit_v2");
	int (*drv)(char *, unsigned) = (int (*)(char *, unsigned))dlsym(h, "nvmlSystemGetDriverVersion");
	int (*cuda)(int *) = (int (*)(int *))dlsym(h, "nvmlSystemGetCudaDriverVersion_v2");
	int (*count)(unsigned *) = (int (*)(unsigned *))dlsym(h, "nvmlDeviceGetCount_v2");
	int (*handle)(unsigned, void **) = (int (*)(unsigned, void **))dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
	int (*name)(void *, char *, unsigned) = (int (*)(void *, char *, unsigned))dlsym(h, "nvmlDeviceGetName");
	int (*cc)(void *, int *, int *) = (int (*)(void *, int *, int *))dlsym(h, "nvmlDeviceGetCudaComputeCapability");
	int (*mem)(void *, mem_t *) = (int (*)(void *, mem_t *))dlsym(h, "nvmlDeviceGetMemoryInfo");
	int (*fini)(void) = (int (*)(void))dlsym(h, "nvmlShutdown");
	if (!init || !drv || !cuda || !count || !handle || !name || !cc || !mem || !fini || init())
		return 1;
	char v[96];
	int cv = 0;
	unsigned n = 0;
	drv(v, sizeof(v));
	cuda(&cv);
	count(&n);
	printf("driver %s cuda %d.%d gpus %u\n", v, cv / 1000, cv % 1000 / 10, n);
	for (unsigned i = 0; i < n; i++) {
		void *d;
		char nm[96];
		int ma = 0, mi = 0;
		mem_t m = { 0, 0, 0 };
		if (handle(i, &d))
			continue;
		name(d, nm, sizeof(nm));
		cc(d, &ma, &mi);
		mem(d, &m);
		printf("%u %s %d.%d %llu\n", i, nm, ma, mi, m.total);
	}
	fini();
	return 0;
}
