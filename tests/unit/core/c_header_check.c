/* The public header must compile as strict C99 (built with -std=c99 -pedantic). */
#include <braid/braid.h>

int braid_c_header_check(void) {
  braidConfig_t config = BRAID_CONFIG_INITIALIZER;
  braidUniqueId id;
  (void)id;
  return (int)config.version + (int)braidFloat8e5m2 + (int)braidAvg + (int)braidNotSupported;
}
