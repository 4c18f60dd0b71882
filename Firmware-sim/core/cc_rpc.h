/*
 * CameraControl firmware core: request dispatch (private). Serves the
 * dispatch table it is given (cc_rpc_set_methods, at cc_device_init) and the
 * extension handler; knows no service itself. Layer order in README.md.
 */
#ifndef CC_RPC_H
#define CC_RPC_H

#include <stddef.h>
#include <stdint.h>

#include "cc_device_state.h"
#include "cc_envelope.h"
#include "cc_rpc_reply.h"

/* Installs the methods the core serves (count entries; the table must outlive the device). */
void cc_rpc_set_methods(cc_device_t *dev, const cc_method_t *methods, size_t count);

/* Installs the extension handler (NULL: none) that serves the services the
 * table does not have. */
void cc_rpc_set_extension(cc_device_t *dev, cc_extension_fn fn, void *ctx);

/* A packet the link delivered (not ACK/HEARTBEAT, not a duplicate). */
void cc_rpc_receive(cc_device_t *dev, const cc_envelope_t *env, uint64_t now_us);

#endif /* CC_RPC_H */
