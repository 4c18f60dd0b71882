// See include/ccg.h.
#include "ccg.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/videodev2.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>

struct ccg_pipeline {
    GstElement *pipeline;
    GstElement *sink;  // appsink (capture) or filesink (recorder)
    GstElement *src;   // appsrc (recorder) or NULL
};

struct ccg_frame {
    GstSample *sample;
    GstMapInfo map;
    int width, height;
    uint64_t clock_ns;
};

static void set_error(char **error, const char *format, ...) G_GNUC_PRINTF(2, 3);
static void set_error(char **error, const char *format, ...) {
    if (!error) return;
    va_list args;
    va_start(args, format);
    *error = g_strdup_vprintf(format, args);
    va_end(args);
}

int ccg_init(char **error) {
    GError *gerror = NULL;
    if (!gst_init_check(NULL, NULL, &gerror)) {
        set_error(error, "GStreamer did not initialise: %s", gerror ? gerror->message : "unknown error");
        g_clear_error(&gerror);
        return -1;
    }
    return 0;
}

int ccg_has_element(const char *factory) {
    GstElementFactory *found = gst_element_factory_find(factory);
    if (!found) return 0;
    gst_object_unref(found);
    return 1;
}

void ccg_free(void *pointer) { g_free(pointer); }

// The first error or end of stream on the bus, without waiting: 0 none, -1 EOS, -2 error.
static int bus_problem(GstElement *pipeline, GstClockTime timeout, char **error) {
    GstBus *bus = gst_element_get_bus(pipeline);
    GstMessage *message =
        gst_bus_timed_pop_filtered(bus, timeout, (GstMessageType)(GST_MESSAGE_ERROR | GST_MESSAGE_EOS));
    gst_object_unref(bus);
    if (!message) return 0;
    int result = -1;
    if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR) {
        GError *gerror = NULL;
        gchar *debug = NULL;
        gst_message_parse_error(message, &gerror, &debug);
        set_error(error, "%s: %s", GST_OBJECT_NAME(GST_MESSAGE_SRC(message)), gerror ? gerror->message : "error");
        g_clear_error(&gerror);
        g_free(debug);
        result = -2;
    } else {
        set_error(error, "end of stream");
    }
    gst_message_unref(message);
    return result;
}

static ccg_pipeline *start(const char *launch, const char *sink_name, const char *src_name, uint64_t timeout_ns,
                           const char *location_element, const char *location, char **error) {
    GError *gerror = NULL;
    GstElement *pipeline = gst_parse_launch(launch, &gerror);
    if (!pipeline || gerror) {
        set_error(error, "bad pipeline: %s", gerror ? gerror->message : "unknown error");
        g_clear_error(&gerror);
        if (pipeline) gst_object_unref(pipeline);
        return NULL;
    }
    ccg_pipeline *result = g_new0(ccg_pipeline, 1);
    result->pipeline = pipeline;
    result->sink = gst_bin_get_by_name(GST_BIN(pipeline), sink_name);
    result->src = src_name ? gst_bin_get_by_name(GST_BIN(pipeline), src_name) : NULL;
    if (!result->sink || (src_name && !result->src)) {
        set_error(error, "pipeline has no element named %s", result->sink ? src_name : sink_name);
        ccg_pipeline_close(result);
        return NULL;
    }
    if (location) {
        GstElement *target = gst_bin_get_by_name(GST_BIN(pipeline), location_element);
        if (target) {
            g_object_set(target, "location", location, NULL);
            gst_object_unref(target);
        }
    }
    if (gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
        if (bus_problem(pipeline, 0, error) == 0) set_error(error, "the pipeline would not start");
        ccg_pipeline_close(result);
        return NULL;
    }
    if (timeout_ns > 0) {
        GstState state;
        GstStateChangeReturn change = gst_element_get_state(pipeline, &state, NULL, timeout_ns);
        if (change == GST_STATE_CHANGE_FAILURE) {
            if (bus_problem(pipeline, 0, error) == 0) set_error(error, "the pipeline failed to start");
            ccg_pipeline_close(result);
            return NULL;
        }
    }
    return result;
}

ccg_pipeline *ccg_capture_open(const char *launch, uint64_t timeout_ns, char **error) {
    return start(launch, "sink", NULL, timeout_ns, NULL, NULL, error);
}

int ccg_capture_pull(ccg_pipeline *pipeline, uint64_t timeout_ns, ccg_frame **frame, char **error) {
    GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(pipeline->sink), timeout_ns);
    if (!sample) {
        int problem = bus_problem(pipeline->pipeline, 0, error);
        if (problem != 0) return problem;
        if (gst_app_sink_is_eos(GST_APP_SINK(pipeline->sink))) {
            set_error(error, "end of stream");
            return -1;
        }
        return 0;
    }
    GstBuffer *buffer = gst_sample_get_buffer(sample);
    GstStructure *caps = gst_caps_get_structure(gst_sample_get_caps(sample), 0);
    ccg_frame *result = g_new0(ccg_frame, 1);
    result->sample = sample;
    gst_structure_get_int(caps, "width", &result->width);
    gst_structure_get_int(caps, "height", &result->height);
    if (!gst_buffer_map(buffer, &result->map, GST_MAP_READ)) {
        gst_sample_unref(sample);
        g_free(result);
        set_error(error, "could not read a frame");
        return -2;
    }
    GstClockTime pts = GST_BUFFER_PTS(buffer);
    GstClockTime base = gst_element_get_base_time(pipeline->pipeline);
    result->clock_ns = GST_CLOCK_TIME_IS_VALID(pts) ? base + pts : 0;
    *frame = result;
    return 1;
}

uint64_t ccg_pipeline_clock_now_ns(ccg_pipeline *pipeline) {
    GstClock *clock = gst_element_get_clock(pipeline->pipeline);
    if (!clock) clock = gst_system_clock_obtain();
    GstClockTime now = gst_clock_get_time(clock);
    gst_object_unref(clock);
    return now;
}

void ccg_pipeline_close(ccg_pipeline *pipeline) {
    if (!pipeline) return;
    gst_element_set_state(pipeline->pipeline, GST_STATE_NULL);
    if (pipeline->sink) gst_object_unref(pipeline->sink);
    if (pipeline->src) gst_object_unref(pipeline->src);
    gst_object_unref(pipeline->pipeline);
    g_free(pipeline);
}

const uint8_t *ccg_frame_data(const ccg_frame *frame, size_t *size) {
    *size = frame->map.size;
    return frame->map.data;
}
int ccg_frame_width(const ccg_frame *frame) { return frame->width; }
int ccg_frame_height(const ccg_frame *frame) { return frame->height; }
uint64_t ccg_frame_clock_ns(const ccg_frame *frame) { return frame->clock_ns; }
void ccg_frame_free(ccg_frame *frame) {
    if (!frame) return;
    gst_buffer_unmap(gst_sample_get_buffer(frame->sample), &frame->map);
    gst_sample_unref(frame->sample);
    g_free(frame);
}

static int push(ccg_pipeline *p, const uint8_t *rgbx, size_t size, uint64_t pts, uint64_t duration, char **error) {
    GstBuffer *buffer = gst_buffer_new_memdup(rgbx, size);
    GST_BUFFER_PTS(buffer) = pts;
    GST_BUFFER_DURATION(buffer) = duration;
    if (gst_app_src_push_buffer(GST_APP_SRC(p->src), buffer) != GST_FLOW_OK) {
        if (bus_problem(p->pipeline, 0, error) == 0) set_error(error, "the encoder refused a frame");
        return -1;
    }
    return 0;
}

static int finish(ccg_pipeline *p, uint64_t timeout_ns, char **error) {
    gst_app_src_end_of_stream(GST_APP_SRC(p->src));
    char *problem = NULL;
    int result = bus_problem(p->pipeline, timeout_ns, &problem);
    int status = 0;
    if (result == 0) {
        set_error(error, "the file was not finished in time");
        status = -1;
    } else if (result == -2) {
        if (error) *error = problem; else g_free(problem);
        problem = NULL;
        status = -1;
    }
    g_free(problem);
    ccg_pipeline_close(p);
    return status;
}

int ccg_write_jpeg(const uint8_t *rgbx, int width, int height, int quality, const char *path, char **error) {
    gchar *launch = g_strdup_printf(
        "appsrc name=src format=time caps=video/x-raw,format=RGBx,width=%d,height=%d,framerate=0/1 ! videoconvert ! "
        "jpegenc quality=%d ! filesink name=sink",
        width, height, quality);
    ccg_pipeline *p = start(launch, "sink", "src", 0, "sink", path, error);
    g_free(launch);
    if (!p) return -1;
    if (push(p, rgbx, (size_t)width * (size_t)height * 4, 0, GST_CLOCK_TIME_NONE, error) != 0) {
        ccg_pipeline_close(p);
        return -1;
    }
    return finish(p, 10 * GST_SECOND, error);
}

ccg_pipeline *ccg_jpeg_encoder_open(int width, int height, int quality, char **error) {
    gchar *launch = g_strdup_printf(
        "appsrc name=src format=time caps=video/x-raw,format=RGBx,width=%d,height=%d,framerate=0/1 ! videoconvert ! "
        "jpegenc quality=%d ! appsink name=sink sync=false max-buffers=2 drop=false",
        width, height, quality);
    ccg_pipeline *p = start(launch, "sink", "src", 0, NULL, NULL, error);
    g_free(launch);
    return p;
}

int ccg_jpeg_encode(ccg_pipeline *encoder, const uint8_t *rgbx, size_t size, uint64_t timeout_ns, uint8_t **jpeg,
                    size_t *jpeg_size, char **error) {
    if (push(encoder, rgbx, size, GST_CLOCK_TIME_NONE, GST_CLOCK_TIME_NONE, error) != 0) return -1;
    ccg_frame *image = NULL;
    int status = ccg_capture_pull(encoder, timeout_ns, &image, error);
    if (status != 1 || !image) return status < 0 ? -1 : 0;
    *jpeg_size = image->map.size;
    *jpeg = g_memdup2(image->map.data, image->map.size);
    ccg_frame_free(image);
    return 1;
}

ccg_pipeline *ccg_recorder_open(const char *path, int width, int height, int fps, char **error) {
    gchar *launch = g_strdup_printf(
        "appsrc name=src format=time caps=video/x-raw,format=RGBx,width=%d,height=%d,framerate=%d/1 ! queue ! "
        "videoconvert ! jpegenc quality=85 ! matroskamux ! filesink name=sink",
        width, height, fps);
    ccg_pipeline *p = start(launch, "sink", "src", 0, "sink", path, error);
    g_free(launch);
    return p;
}

int ccg_recorder_push(ccg_pipeline *recorder, const uint8_t *rgbx, size_t size, uint64_t pts_ns, uint64_t duration_ns,
                      char **error) {
    return push(recorder, rgbx, size, pts_ns, duration_ns, error);
}

int ccg_recorder_finish(ccg_pipeline *recorder, uint64_t timeout_ns, char **error) {
    return finish(recorder, timeout_ns, error);
}

int ccg_decode_file(const char *path, uint8_t **pixels, size_t *size, int *width, int *height, int *frames,
                    uint64_t *duration_ns, char **error) {
    ccg_pipeline *p = start(
        "filesrc name=file ! decodebin ! videoconvert ! video/x-raw,format=RGBx ! appsink name=sink sync=false",
        "sink", NULL, 0, "file", path, error);
    if (!p) return -1;
    *pixels = NULL;
    *size = 0;
    *frames = 0;
    *duration_ns = 0;
    for (;;) {
        GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(p->sink), 10 * GST_SECOND);
        if (!sample) break;
        GstBuffer *buffer = gst_sample_get_buffer(sample);
        if (*frames == 0) {
            GstStructure *caps = gst_caps_get_structure(gst_sample_get_caps(sample), 0);
            gst_structure_get_int(caps, "width", width);
            gst_structure_get_int(caps, "height", height);
            GstMapInfo map;
            if (gst_buffer_map(buffer, &map, GST_MAP_READ)) {
                *pixels = g_memdup2(map.data, map.size);
                *size = map.size;
                gst_buffer_unmap(buffer, &map);
            }
        }
        *frames += 1;
        GstClockTime pts = GST_BUFFER_PTS(buffer), duration = GST_BUFFER_DURATION(buffer);
        if (GST_CLOCK_TIME_IS_VALID(pts)) *duration_ns = pts + (GST_CLOCK_TIME_IS_VALID(duration) ? duration : 0);
        gst_sample_unref(sample);
    }
    int status = 0;
    if (!gst_app_sink_is_eos(GST_APP_SINK(p->sink)) || *frames == 0) {
        if (bus_problem(p->pipeline, 0, error) != -2) set_error(error, "%s: no decodable frames", path);
        g_free(*pixels);
        *pixels = NULL;
        status = -1;
    }
    ccg_pipeline_close(p);
    return status;
}

static uint8_t clamp_byte(double value) {
    if (value <= 0) return 0;
    if (value >= 255) return 255;
    return (uint8_t)(value + 0.5);
}

void ccg_process(const uint8_t *src, int width, int height, double zoom, double gain, uint8_t *dst) {
    if (zoom < 1) zoom = 1;
    double crop_w = width / zoom, crop_h = height / zoom;
    double x0 = (width - crop_w) / 2, y0 = (height - crop_h) / 2;
    for (int y = 0; y < height; y++) {
        double sy = y0 + (y + 0.5) * crop_h / height - 0.5;
        if (sy < 0) sy = 0;
        int iy = (int)sy;
        if (iy > height - 2) iy = height > 1 ? height - 2 : 0;
        double fy = sy - iy;
        if (fy > 1) fy = 1;
        for (int x = 0; x < width; x++) {
            double sx = x0 + (x + 0.5) * crop_w / width - 0.5;
            if (sx < 0) sx = 0;
            int ix = (int)sx;
            if (ix > width - 2) ix = width > 1 ? width - 2 : 0;
            double fx = sx - ix;
            if (fx > 1) fx = 1;
            const uint8_t *a = src + ((size_t)iy * width + ix) * 4;
            const uint8_t *b = a + (width > 1 ? 4 : 0);
            const uint8_t *c = a + (height > 1 ? (size_t)width * 4 : 0);
            const uint8_t *d = c + (width > 1 ? 4 : 0);
            uint8_t *out = dst + ((size_t)y * width + x) * 4;
            for (int k = 0; k < 3; k++) {
                double top = a[k] + (b[k] - a[k]) * fx, bottom = c[k] + (d[k] - c[k]) * fx;
                out[k] = clamp_byte((top + (bottom - top) * fy) * gain);
            }
            out[3] = 255;
        }
    }
}

uint32_t ccg_v4l2_cid_zoom_absolute(void) { return V4L2_CID_ZOOM_ABSOLUTE; }
uint32_t ccg_v4l2_cid_auto_exposure_bias(void) { return V4L2_CID_AUTO_EXPOSURE_BIAS; }

uint32_t ccg_v4l2_cid_3a_lock(void) { return V4L2_CID_3A_LOCK; }
int64_t ccg_v4l2_lock_exposure(void) { return V4L2_LOCK_EXPOSURE; }
int64_t ccg_v4l2_lock_focus(void) { return V4L2_LOCK_FOCUS; }
uint32_t ccg_v4l2_cid_exposure_auto(void) { return V4L2_CID_EXPOSURE_AUTO; }
int64_t ccg_v4l2_exposure_manual(void) { return V4L2_EXPOSURE_MANUAL; }
uint32_t ccg_v4l2_cid_focus_auto(void) { return V4L2_CID_FOCUS_AUTO; }

int ccg_v4l2_get(int fd, uint32_t id, int64_t *value) {
    struct v4l2_control control = {.id = id, .value = 0};
    if (ioctl(fd, VIDIOC_G_CTRL, &control) != 0) return -errno;
    *value = control.value;
    return 0;
}

int ccg_v4l2_open(const char *path) { return open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC); }

int ccg_v4l2_query(int fd, uint32_t id, int64_t *minimum, int64_t *maximum, int64_t *step, int64_t *initial) {
    struct v4l2_queryctrl query;
    memset(&query, 0, sizeof query);
    query.id = id;
    if (ioctl(fd, VIDIOC_QUERYCTRL, &query) != 0) return 0;
    if (query.flags & V4L2_CTRL_FLAG_DISABLED) return 0;
    *minimum = query.minimum;
    *maximum = query.maximum;
    *step = query.step;
    *initial = query.default_value;
    return 1;
}

int ccg_v4l2_set(int fd, uint32_t id, int64_t value) {
    struct v4l2_control control = {.id = id, .value = (int32_t)value};
    return ioctl(fd, VIDIOC_S_CTRL, &control) == 0 ? 0 : -errno;
}

void ccg_v4l2_close(int fd) {
    if (fd >= 0) close(fd);
}
