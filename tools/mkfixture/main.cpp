// rebox-mkfixture entry point (placeholder until the generator lands).
int main() { return 0; }
