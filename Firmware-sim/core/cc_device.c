/* CameraControl firmware core: the device (early stub; the real one follows). */
#include "cc_device.h"

#include <string.h>

void cc_device_init(cc_device_t *dev, const cc_hal_t *hal, const cc_device_info_t *info)
{
    memset(dev, 0, sizeof *dev);
    dev->hal = hal;
    dev->info = info;
    cc_input_default_config(&dev->config);
    cc_input_init(&dev->input, &dev->config);
}

void cc_device_set_extension(cc_device_t *dev, cc_extension_fn fn, void *ctx, bool is_simulator)
{
    dev->extension = fn;
    dev->extension_ctx = ctx;
    dev->is_simulator = is_simulator;
}

void cc_device_poll(cc_device_t *dev)
{
    (void)dev;
}

const cc_counters_t *cc_device_counters(const cc_device_t *dev)
{
    return &dev->counters;
}

const cc_input_config_t *cc_device_config(const cc_device_t *dev)
{
    return &dev->config;
}

bool cc_device_session_active(const cc_device_t *dev)
{
    return dev->link.session;
}
