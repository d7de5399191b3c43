/* not written yet: skipped */
int main(void)
{
	return 77;
}
