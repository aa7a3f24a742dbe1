// Broken test plugin: a shared library with the right file name but no entry symbol.
extern "C" __attribute__((visibility("default"))) int not_the_entry(void) {
  return 42;
}
