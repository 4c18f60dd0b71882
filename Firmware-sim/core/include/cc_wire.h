/*
 * CameraControl firmware core: every wire value of docs/PROTOCOL.md in one place.
 *
 * Unstuffed frame (all integers little-endian):
 *
 *   byte 0          1..2        3..                  ..                    last 2
 *   +-------------+-----------+--------------------+------------------+---------+---------+
 *   | type | flags| sequence  | call id            | method or status | payload | CRC-16  |
 *   | bits0-3 4-7 | u16 LE    | varint (1-5 bytes) | 0, 1 or 2 bytes  |  ...    | u16 LE  |
 *   +-------------+-----------+--------------------+------------------+---------+---------+
 *
 * On the wire: COBS(frame) 0x00.
 */
#ifndef CC_WIRE_H
#define CC_WIRE_H

/* §2 framing */
#define CC_WIRE_DELIMITER 0x00u
#define CC_WIRE_MIN_MAX_FRAME_BYTES 128u  /* every implementation accepts this */
#define CC_WIRE_MAX_MAX_FRAME_BYTES 4093u /* limit of the CRC-16's HD = 4 */

/* §3 check */
#define CC_WIRE_CHECK_BYTES 2u
#define CC_WIRE_CRC16_POLY 0x1021u
#define CC_WIRE_CRC16_INIT 0xFFFFu

/* §4 envelope: byte 0 */
#define CC_WIRE_TYPE_MASK 0x0Fu
#define CC_WIRE_FLAGS_MASK 0xF0u
#define CC_WIRE_FLAG_RELIABLE 0x10u

/* §4 packet types */
#define CC_PKT_REQUEST 1u
#define CC_PKT_RESPONSE 2u
#define CC_PKT_STREAM_MESSAGE 3u
#define CC_PKT_STREAM_END 4u
#define CC_PKT_CANCEL 5u
#define CC_PKT_ERROR 6u
#define CC_PKT_ACK 7u
#define CC_PKT_HEARTBEAT 8u

/* §4 envelope sizes */
#define CC_WIRE_SEQUENCE_BYTES 2u
#define CC_WIRE_CALL_ID_MAX_BYTES 5u
#define CC_WIRE_MIN_ENVELOPE_BYTES 4u     /* type + sequence + 1-byte call id */
#define CC_WIRE_MAX_ENVELOPE_BYTES 10u    /* type + sequence + 5-byte call id + 2 */
#define CC_WIRE_LINK_CALL_ID 0u           /* ACK and HEARTBEAT */
#define CC_WIRE_SEQUENCE_OFFSET 1u        /* u16 LE after the type/flags byte */
#define CC_WIRE_CALL_ID_OFFSET 3u
#define CC_WIRE_REQUEST_ID_BYTES 2u       /* service id, method id */
#define CC_WIRE_STATUS_BYTES 1u           /* STREAM_END, ERROR */

/* §4 call id: unsigned LEB128 */
#define CC_WIRE_VARINT_CONTINUE 0x80u
#define CC_WIRE_VARINT_PAYLOAD 0x7Fu
#define CC_WIRE_VARINT_BITS 7u
#define CC_WIRE_VARINT_LAST_MASK 0xF0u    /* bits a 5th byte must not have (value < 2^32) */
#define CC_WIRE_ACK_PAYLOAD_BYTES 2u

/* §5 status codes */
#define CC_STATUS_OK 0u
#define CC_STATUS_CANCELLED 1u
#define CC_STATUS_UNKNOWN 2u
#define CC_STATUS_INVALID_ARGUMENT 3u
#define CC_STATUS_DEADLINE_EXCEEDED 4u
#define CC_STATUS_NOT_FOUND 5u
#define CC_STATUS_ALREADY_EXISTS 6u
#define CC_STATUS_PERMISSION_DENIED 7u
#define CC_STATUS_RESOURCE_EXHAUSTED 8u
#define CC_STATUS_FAILED_PRECONDITION 9u
#define CC_STATUS_ABORTED 10u
#define CC_STATUS_OUT_OF_RANGE 11u
#define CC_STATUS_UNIMPLEMENTED 12u
#define CC_STATUS_INTERNAL 13u
#define CC_STATUS_UNAVAILABLE 14u
#define CC_STATUS_DATA_LOSS 15u
#define CC_STATUS_UNAUTHENTICATED 16u

/* §6 reliability */
#define CC_WIRE_SEQUENCE_HALF_RANGE 32768u /* d in [1, 32768) is "ahead" */
#define CC_WIRE_DUPLICATE_WINDOW 64u
#define CC_WIRE_RTO_INITIAL_US 20000u      /* device default retransmission timeout */
#define CC_WIRE_MAX_TRIES 8u               /* transmissions of one reliable packet */

/* input.proto RawSampleBatch.samples: one 4-byte LE record per sample */
#define CC_WIRE_RAW_RECORD_BYTES 4u
#define CC_WIRE_RAW_FORCE_MAX 0xFFFFu      /* bits 0..15, saturating */
#define CC_WIRE_RAW_POSITION_SHIFT 16u     /* bits 16..30 */
#define CC_WIRE_RAW_POSITION_MAX 0x7FFFu
#define CC_WIRE_RAW_TOUCH_BIT 0x80000000u  /* bit 31 */
/* RawSampleBatch.delta_samples (cc_rawdelta.h): sent from this minor version on (v1.2) */
#define CC_WIRE_RAW_DELTA_MINOR 2u

/* Protobuf's wire types (the low 3 bits of a field's key), for cc_pbw.h, cc_pbr.h and the
 * generated cc_pb.h. Groups (3, 4) are not part of proto3. */
#define CC_PB_WIRE_VARINT 0u
#define CC_PB_WIRE_FIXED64 1u
#define CC_PB_WIRE_LEN 2u
#define CC_PB_WIRE_FIXED32 5u
#define CC_PB_MAX_FIELD_NUMBER 0x1FFFFFFFu
#define CC_PB_MAX_VARINT_BYTES 10u

/* §8 liveness */
#define CC_WIRE_DEAD_AFTER_HEARTBEATS 4u

#endif /* CC_WIRE_H */
