/* doctor's container rule: on a machine with an NVIDIA GPU and Docker or
 * Podman, is the NVIDIA Container Toolkit installed (nvidia-ctk) and
 * configured (the "nvidia" runtime in /etc/docker/daemon.json for Docker,
 * a CDI spec in /etc/cdi or /var/run/cdi for Podman)?  The steps are those
 * of NVIDIA's install guide:
 * https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html
 * (install nvidia-container-toolkit; `nvidia-ctk runtime configure
 * --runtime=docker` and restart Docker; for Podman, `nvidia-ctk cdi
 * generate --output=/etc/cdi/nvidia.yaml`). */
#include "doctor_int.h"

#define CTK_GUIDE "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html"
#define CTK_DOCKER "sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker"
#define CTK_CDI "sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml"

static const char *engines(const gpuenv_facts_container_t *c)
{
	return c->docker && c->podman ? "Docker and Podman" : c->docker ? "Docker" : "Podman";
}

static void evidence(drun_t *r, gpuenv_verdict_t *v, const gpuenv_facts_container_t *c)
{
	size_t n = c->cdi_specs.state == GPUENV_FACT_SET ? c->cdi_specs.n : 0;

	dr_ev(r, v, "container.docker", "container", "%s", c->docker ? "true" : "false");
	dr_ev(r, v, "container.podman", "container", "%s", c->podman ? "true" : "false");
	dr_ev(r, v, "container.nvidia_ctk", "container", "%s",
		c->nvidia_ctk ? c->nvidia_ctk : "null");
	if (c->docker)
		dr_ev(r, v, "container.docker_runtime_nvidia", "container", "%s",
			c->docker_runtime_nvidia ? "true" : "false");
	dr_ev(r, v, "container.cdi_specs", "container", "%s", n ? c->cdi_specs.items[0] : "[]");
}

void dr_rule_container(drun_t *r)
{
	const gpuenv_facts_container_t *c = &r->facts->container;
	bool cdi = c->cdi_specs.state == GPUENV_FACT_SET && c->cdi_specs.n > 0;
	bool docker_missing, podman_missing;
	gpuenv_verdict_t *v;

	if (!c->present || !r->gpu_host || (!c->docker && !c->podman))
		return;
	if (!c->nvidia_ctk) {
		v = dr_verdict(r, "container-toolkit-missing", GPUENV_SEV_WARNING, "container",
			engines(c));
		if (!v)
			return;
		evidence(r, v, c);
		v->message = dr_fmt(r, "%s is installed on this GPU machine but the NVIDIA Container "
			"Toolkit is not (no nvidia-ctk in /usr/bin or on PATH), so containers cannot "
			"use the GPUs (docker run --gpus all fails with \"could not select device "
			"driver\")", engines(c));
		v->fix = dr_fmt(r, "install the NVIDIA Container Toolkit as " CTK_GUIDE " says "
			"(sudo apt-get install -y nvidia-container-toolkit), then %s%s%s",
			c->docker ? CTK_DOCKER : "", c->docker && c->podman ? "; for Podman: " : "",
			c->podman ? CTK_CDI : "");
		return;
	}
	docker_missing = c->docker && !c->docker_runtime_nvidia;
	podman_missing = c->podman && !cdi;
	if (docker_missing || podman_missing) {
		v = dr_verdict(r, "container-toolkit-unconfigured", GPUENV_SEV_WARNING, "container",
			engines(c));
		if (!v)
			return;
		evidence(r, v, c);
		v->message = dr_fmt(r, "the NVIDIA Container Toolkit is installed (%s) but not "
			"configured: %s%s%s", c->nvidia_ctk,
			docker_missing ? "/etc/docker/daemon.json has no \"nvidia\" runtime under "
					 "\"runtimes\", so Docker cannot start GPU containers" : "",
			docker_missing && podman_missing ? "; " : "",
			podman_missing ? "no NVIDIA CDI spec in /etc/cdi or /var/run/cdi, so Podman "
					 "cannot pass the GPUs (--device nvidia.com/gpu=all)" : "");
		v->fix = dr_fmt(r, "%s%s%s (" CTK_GUIDE ")", docker_missing ? CTK_DOCKER : "",
			docker_missing && podman_missing ? "; " : "", podman_missing ? CTK_CDI : "");
		return;
	}
	v = dr_verdict(r, "container-toolkit-ok", GPUENV_SEV_INFO, "container", engines(c));
	if (!v)
		return;
	evidence(r, v, c);
	v->message = dr_fmt(r, "the NVIDIA Container Toolkit is installed (%s) and configured for "
		"%s", c->nvidia_ctk, engines(c));
}
