// The C interface of the Fast DDS shim (shim.cpp): the few Fast DDS calls the Rust backend
// needs, with plain C types so that Rust can call them through `extern "C"`. Entities are
// opaque pointers; every function catches C++ exceptions and reports failure by its result.

#ifndef ROSBAG2_RS_FASTDDS_SHIM_HPP
#define ROSBAG2_RS_FASTDDS_SHIM_HPP

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fdds_participant fdds_participant;
typedef struct fdds_writer fdds_writer;
typedef struct fdds_reader fdds_reader;

// An RTPS sample identity: the writer's GUID and the sample's sequence number.
typedef struct fdds_sample_identity
{
  uint8_t guid[16];
  int64_t sequence_number;
} fdds_sample_identity;

// Policies of an endpoint, as numbers (see qos.rs for their meaning).
typedef struct fdds_qos
{
  int32_t reliable;        // 1 reliable, 0 best effort
  int32_t transient_local; // 1 transient local, 0 volatile
  int32_t keep_all;        // 1 keep all, 0 keep last
  int32_t depth;           // keep-last depth
  int64_t deadline_ns;     // < 0: infinite
  int64_t lifespan_ns;     // < 0: infinite
  int32_t liveliness;      // 0 automatic, 1 manual by participant, 2 manual by topic
  int64_t lease_ns;        // < 0: infinite
} fdds_qos;

// Participant settings: discovery range 0 off, 1 localhost, 2 subnet, 3 system default.
typedef struct fdds_participant_config
{
  uint32_t domain_id;
  int32_t range;
  const char * static_peers;  // addresses separated by ';', may be empty
  int32_t qos_from_xml;       // RMW_FASTRTPS_USE_QOS_FROM_XML=1
  int32_t asynchronous;       // RMW_FASTRTPS_PUBLICATION_MODE=ASYNCHRONOUS
} fdds_participant_config;

// An endpoint discovered (or changed, or removed: `alive` 0) on the graph.
typedef struct fdds_endpoint_event
{
  int32_t is_writer;
  int32_t alive;
  uint8_t guid[16];
  uint8_t participant[16];
  const char * topic;
  const char * type_name;
  const uint8_t * user_data;
  size_t user_data_len;
  fdds_qos qos;
} fdds_endpoint_event;

// Discovery callbacks, on a Fast DDS thread: an endpoint event, and a participant gone (its
// GUID).
typedef void (* fdds_endpoint_cb)(void * ctx, const fdds_endpoint_event * event);
typedef void (* fdds_participant_gone_cb)(void * ctx, const uint8_t * guid);

// A received sample, on a Fast DDS thread. `data` is the serialized payload with its
// encapsulation header; timestamps in ns since the epoch.
typedef void (* fdds_sample_cb)(
  void * ctx, const uint8_t * data, size_t len, const fdds_sample_identity * identity,
  const fdds_sample_identity * related, int64_t source_timestamp);

// The last error of this thread (empty if none).
const char * fdds_last_error(void);

// The version of the Fast DDS the shim was built against, e.g. "2.14.5" or "3.2.2".
const char * fdds_version(void);

fdds_participant * fdds_participant_new(
  const fdds_participant_config * config, const char * user_data, fdds_endpoint_cb on_endpoint,
  fdds_participant_gone_cb on_participant_gone, void * ctx);
void fdds_participant_delete(fdds_participant * participant);
void fdds_participant_guid(const fdds_participant * participant, uint8_t * guid);

fdds_writer * fdds_writer_new(
  fdds_participant * participant, const char * topic, const char * type_name,
  const fdds_qos * qos, const char * user_data);
void fdds_writer_delete(fdds_writer * writer);
void fdds_writer_guid(const fdds_writer * writer, uint8_t * guid);
// Writes `data`; `related` may be null. Fills `written` (may be null) with the sample's
// identity. Returns 0 on success.
int32_t fdds_writer_write(
  fdds_writer * writer, const uint8_t * data, size_t len, const fdds_sample_identity * related,
  fdds_sample_identity * written);
// Writes `data` with the source timestamp `timestamp_ns` (ns since the epoch). Returns 0 on
// success.
int32_t fdds_writer_write_at(
  fdds_writer * writer, const uint8_t * data, size_t len, int64_t timestamp_ns);
int32_t fdds_writer_matched(const fdds_writer * writer);
// Waits until `reader_guid` is matched with the writer: 1 matched, 0 timed out.
int32_t fdds_writer_wait_matched(
  fdds_writer * writer, const uint8_t * reader_guid, int64_t timeout_ns);
// Waits for acknowledgements: 1 all acknowledged, 0 not.
int32_t fdds_writer_wait_for_acks(fdds_writer * writer, int64_t timeout_ns);

fdds_reader * fdds_reader_new(
  fdds_participant * participant, const char * topic, const char * type_name,
  const fdds_qos * qos, const char * user_data, fdds_sample_cb on_sample, void * ctx);
// Deletes the reader; no callback runs once it returns.
void fdds_reader_delete(fdds_reader * reader);
void fdds_reader_guid(const fdds_reader * reader, uint8_t * guid);
int32_t fdds_reader_matched(const fdds_reader * reader);

#ifdef __cplusplus
}
#endif

#endif  // ROSBAG2_RS_FASTDDS_SHIM_HPP
