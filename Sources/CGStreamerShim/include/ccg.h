// CGStreamerShim: the few GStreamer operations CameraControlGStreamer needs, as plain C functions
// (GStreamer's API is variadic and macro-heavy; Swift cannot call most of it). No GStreamer type
// appears here, so Swift sees only integers, bytes and opaque handles.
#ifndef CCG_H
#define CCG_H

#include <stddef.h>
#include <stdint.h>

/// A running GStreamer pipeline (capture, recorder).
typedef struct ccg_pipeline ccg_pipeline;
/// One decoded frame pulled from a pipeline's appsink (RGBx, 4 bytes a pixel, rows packed).
typedef struct ccg_frame ccg_frame;

/// Initialises GStreamer (once; later calls do nothing). Returns 0, or -1 with *error set.
int ccg_init(char **error);
/// 1 when an element factory of this name is installed (videotestsrc, v4l2src, libcamerasrc…).
int ccg_has_element(const char *factory);
/// Frees a string or buffer handed out by this shim.
void ccg_free(void *pointer);

/// Starts a capture pipeline from gst-launch text that ends in `appsink name=sink`, and waits up to
/// timeout_ns for it to play. NULL with *error set when it cannot be built or started.
ccg_pipeline *ccg_capture_open(const char *launch, uint64_t timeout_ns, char **error);
/// The next frame: 1 with *frame set, 0 after timeout_ns with none, -1 at end of stream, -2 on an
/// error (then *error says what the pipeline reported).
int ccg_capture_pull(ccg_pipeline *pipeline, uint64_t timeout_ns, ccg_frame **frame, char **error);
/// The pipeline clock's time now, nanoseconds (the clock frame times are on).
uint64_t ccg_pipeline_clock_now_ns(ccg_pipeline *pipeline);
/// Stops and frees a pipeline.
void ccg_pipeline_close(ccg_pipeline *pipeline);

/// The frame's pixels (RGBx) and their byte count.
const uint8_t *ccg_frame_data(const ccg_frame *frame, size_t *size);
/// The frame's width in pixels.
int ccg_frame_width(const ccg_frame *frame);
/// The frame's height in pixels.
int ccg_frame_height(const ccg_frame *frame);
/// The frame's capture time on the pipeline clock (base time + PTS), nanoseconds.
uint64_t ccg_frame_clock_ns(const ccg_frame *frame);
/// Frees a frame.
void ccg_frame_free(ccg_frame *frame);

/// Encodes RGBx pixels as a JPEG file. 0, or -1 with *error set.
int ccg_write_jpeg(const uint8_t *rgbx, int width, int height, int quality, const char *path, char **error);

/// Starts an in-memory JPEG encoder: RGBx frames of one size in (ccg_jpeg_encode), JPEG images out. NULL
/// with *error set.
ccg_pipeline *ccg_jpeg_encoder_open(int width, int height, int quality, char **error);

/// Encodes one RGBx frame of the encoder's size: 1 with *jpeg (free it with ccg_free) and *jpeg_size, 0 when
/// no image came within timeout_ns, or -1 with *error set.
int ccg_jpeg_encode(ccg_pipeline *encoder, const uint8_t *rgbx, size_t size, uint64_t timeout_ns, uint8_t **jpeg,
                    size_t *jpeg_size, char **error);

/// Starts a recorder: RGBx frames in, Motion-JPEG in Matroska out (plugins-good). NULL with *error set.
ccg_pipeline *ccg_recorder_open(const char *path, int width, int height, int fps, char **error);
/// Queues one frame at pts_ns (from the start of the video) lasting duration_ns. 0, or -1 with *error.
int ccg_recorder_push(
    ccg_pipeline *recorder, const uint8_t *rgbx, size_t size, uint64_t pts_ns, uint64_t duration_ns, char **error);
/// Ends the stream, waits up to timeout_ns for the file to be complete, frees the recorder. 0 or -1.
int ccg_recorder_finish(ccg_pipeline *recorder, uint64_t timeout_ns, char **error);

/// Decodes an image or video file with decodebin: the first frame as RGBx (free *pixels with ccg_free),
/// the frame count and the end time of the last frame (nanoseconds). 0, or -1 with *error set.
int ccg_decode_file(
    const char *path, uint8_t **pixels, size_t *size, int *width, int *height, int *frames, uint64_t *duration_ns,
    char **error);

/// Digital zoom and gain: the centre 1/zoom of src scaled back to width × height (bilinear), each colour
/// multiplied by gain and clamped, into dst (both RGBx, width × height).
void ccg_process(const uint8_t *src, int width, int height, double zoom, double gain, uint8_t *dst);

/// The V4L2 control ids the backend uses.
uint32_t ccg_v4l2_cid_zoom_absolute(void);
/// V4L2_CID_AUTO_EXPOSURE_BIAS.
uint32_t ccg_v4l2_cid_auto_exposure_bias(void);
/// V4L2_CID_3A_LOCK (a bitmask: ccg_v4l2_lock_exposure(), ccg_v4l2_lock_focus()).
uint32_t ccg_v4l2_cid_3a_lock(void);
/// V4L2_LOCK_EXPOSURE.
int64_t ccg_v4l2_lock_exposure(void);
/// V4L2_LOCK_FOCUS.
int64_t ccg_v4l2_lock_focus(void);
/// V4L2_CID_EXPOSURE_AUTO (a menu; ccg_v4l2_exposure_manual() holds the exposure).
uint32_t ccg_v4l2_cid_exposure_auto(void);
/// V4L2_EXPOSURE_MANUAL.
int64_t ccg_v4l2_exposure_manual(void);
/// V4L2_CID_FOCUS_AUTO (boolean: 0 holds the focus).
uint32_t ccg_v4l2_cid_focus_auto(void);
/// Reads a control's current value: 0, or -errno.
int ccg_v4l2_get(int fd, uint32_t id, int64_t *value);
/// Opens a V4L2 device for its controls (a second open beside v4l2src's). The fd, or -1.
int ccg_v4l2_open(const char *path);
/// 1 and the control's range when the device has control id, else 0.
int ccg_v4l2_query(int fd, uint32_t id, int64_t *minimum, int64_t *maximum, int64_t *step, int64_t *initial);
/// Sets a control. 0, or -errno.
int ccg_v4l2_set(int fd, uint32_t id, int64_t value);
/// Closes the fd.
void ccg_v4l2_close(int fd);

#endif
