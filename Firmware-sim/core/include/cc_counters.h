/* CameraControl firmware core: link and call counters (DiagnosticsService). */
#ifndef CC_COUNTERS_H
#define CC_COUNTERS_H

#include <stdint.h>

#include "cc_counters_fields.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Link and call counters: one uint32_t per field of cameracontrol.v1.Counters
   (the list is generated from the schema, see cc_counters_fields.h). */
#define CC_COUNTER_DECLARE(name) uint32_t name;
typedef struct cc_counters {
    CC_COUNTER_FIELDS(CC_COUNTER_DECLARE)
} cc_counters_t;
#undef CC_COUNTER_DECLARE

#ifdef __cplusplus
}
#endif

#endif /* CC_COUNTERS_H */
