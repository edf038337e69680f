// The Fast DDS shim: a participant, writers and readers of serialized samples, and discovery
// callbacks, set up as rmw_fastrtps_cpp (branch jazzy) sets them up, behind the C interface of
// shim.hpp. Fast DDS 2.x (Debian's 2.9, ROS 2 Jazzy's 2.14) and 3.x (ROS 2 Kilted's 3.2): what
// differs is named in compat.hpp, and the rest is in `#if FASTDDS_VERSION_MAJOR` blocks here.

#include "shim.hpp"
#include "compat.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <pthread.h>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/domain/DomainParticipantListener.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/DataWriterListener.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/DataReaderListener.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/topic/Topic.hpp>
#include <fastdds/dds/topic/TopicDataType.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>

namespace fdd = eprosima::fastdds::dds;
namespace rtps = fdds_compat::rtps;
using fdds_compat::Duration;
using fdds_compat::ok;

// Our writers' heartbeat period (sent only while a reader has not acknowledged everything).
constexpr uint32_t HEARTBEAT_PERIOD_NS = 50'000'000;

namespace
{

thread_local std::string last_error;

// How long a writer being deleted (or alive at process exit) waits for its readers to
// acknowledge what it wrote, as Cyclone DDS lingers: the last message of a playback must not
// be lost because the process ends right after writing it.
const Duration writer_linger(1, 0);

// Live writers, for the wait at exit.
std::mutex live_writers_mutex;
std::set<fdds_writer *> live_writers;
void linger_at_exit();

void fail(const std::string & what)
{
  last_error = what;
}

void copy_guid(const rtps::GUID_t & guid, uint8_t * out)
{
  std::memcpy(out, guid.guidPrefix.value, 12);
  std::memcpy(out + 12, guid.entityId.value, 4);
}

rtps::GUID_t to_guid(const uint8_t * in)
{
  rtps::GUID_t guid;
  std::memcpy(guid.guidPrefix.value, in, 12);
  std::memcpy(guid.entityId.value, in + 12, 4);
  return guid;
}

int64_t sequence(const rtps::SequenceNumber_t & sn)
{
  return (static_cast<int64_t>(sn.high) << 32) | sn.low;
}

void copy_identity(const rtps::SampleIdentity & in, fdds_sample_identity * out)
{
  copy_guid(in.writer_guid(), out->guid);
  out->sequence_number = sequence(in.sequence_number());
}

Duration duration(int64_t ns)
{
  if (ns < 0) {
    return fdds_compat::time_infinite();
  }
  return Duration(
    static_cast<int32_t>(ns / 1000000000), static_cast<uint32_t>(ns % 1000000000));
}

int64_t nanos(const Duration & d)
{
  if (d == fdds_compat::time_infinite() || d.seconds < 0) {
    return -1;
  }
  return static_cast<int64_t>(d.seconds) * 1000000000 + d.nanosec;
}

// Serialized bytes handed to a write.
struct RawSample
{
  const uint8_t * data;
  size_t len;
};

// Samples of any type, as serialized bytes: what is written is the payload as it is
// (encapsulation header included), what is read is the payload as received.
class RawType : public fdd::TopicDataType
{
public:
  explicit RawType(const std::string & name)
  {
#if FASTDDS_VERSION_MAJOR >= 3
    set_name(name);
    // The initial size of preallocated payloads; they grow as needed (the memory policy is
    // PREALLOCATED_WITH_REALLOC, as rmw_fastrtps sets it).
    max_serialized_type_size = 1024;
    is_compute_key_provided = false;
#else
    setName(name.c_str());
    m_typeSize = 1024;
    m_isGetKeyDefined = false;
#endif
  }

#if FASTDDS_VERSION_MAJOR >= 3
  bool serialize(
    const void * const data, rtps::SerializedPayload_t & payload,
    fdd::DataRepresentationId_t) override
  {
    return write_payload(*static_cast<const RawSample *>(data), payload);
  }

  bool deserialize(rtps::SerializedPayload_t & payload, void * data) override
  {
    return read_payload(payload, data);
  }

  uint32_t calculate_serialized_size(const void * const data, fdd::DataRepresentationId_t) override
  {
    return static_cast<uint32_t>(static_cast<const RawSample *>(data)->len);
  }

  void * create_data() override {return new std::vector<uint8_t>();}

  void delete_data(void * data) override {delete static_cast<std::vector<uint8_t> *>(data);}

  bool compute_key(rtps::SerializedPayload_t &, rtps::InstanceHandle_t &, bool) override
  {
    return false;
  }

  bool compute_key(const void * const, rtps::InstanceHandle_t &, bool) override {return false;}
#else
  bool serialize(void * data, rtps::SerializedPayload_t * payload) override
  {
    return write_payload(*static_cast<const RawSample *>(data), *payload);
  }

  bool deserialize(rtps::SerializedPayload_t * payload, void * data) override
  {
    return read_payload(*payload, data);
  }

  std::function<uint32_t()> getSerializedSizeProvider(void * data) override
  {
    auto len = static_cast<RawSample *>(data)->len;
    return [len]() {return static_cast<uint32_t>(len);};
  }

  void * createData() override {return new std::vector<uint8_t>();}

  void deleteData(void * data) override {delete static_cast<std::vector<uint8_t> *>(data);}

  bool getKey(void *, rtps::InstanceHandle_t *, bool) override {return false;}
#endif

private:
  static bool write_payload(const RawSample & sample, rtps::SerializedPayload_t & payload)
  {
    if (sample.len < 4 || sample.len > UINT32_MAX) {
      return false;
    }
    if (payload.max_size < sample.len) {
      payload.reserve(static_cast<uint32_t>(sample.len));
    }
    std::memcpy(payload.data, sample.data, sample.len);
    payload.length = static_cast<uint32_t>(sample.len);
    payload.encapsulation = (sample.data[1] & 1) ? CDR_LE : CDR_BE;
    return true;
  }

  static bool read_payload(const rtps::SerializedPayload_t & payload, void * data)
  {
    auto * out = static_cast<std::vector<uint8_t> *>(data);
    out->assign(payload.data, payload.data + payload.length);
    return true;
  }
};

void set_qos_common(
  const fdds_qos & q, fdd::HistoryQosPolicy & history, fdd::ReliabilityQosPolicy & reliability,
  fdd::DurabilityQosPolicy & durability, fdd::DeadlineQosPolicy & deadline,
  fdd::LifespanQosPolicy & lifespan, fdd::LivelinessQosPolicy & liveliness)
{
  history.kind = q.keep_all ? fdd::KEEP_ALL_HISTORY_QOS : fdd::KEEP_LAST_HISTORY_QOS;
  if (!q.keep_all && q.depth > 0 && history.depth < q.depth) {
    history.depth = q.depth;
  }
  reliability.kind = q.reliable ? fdd::RELIABLE_RELIABILITY_QOS : fdd::BEST_EFFORT_RELIABILITY_QOS;
  durability.kind =
    q.transient_local ? fdd::TRANSIENT_LOCAL_DURABILITY_QOS : fdd::VOLATILE_DURABILITY_QOS;
  if (q.deadline_ns >= 0) {
    deadline.period = duration(q.deadline_ns);
  }
  if (q.lifespan_ns >= 0) {
    lifespan.duration = duration(q.lifespan_ns);
  }
  liveliness.kind = q.liveliness == 2 ? fdd::MANUAL_BY_TOPIC_LIVELINESS_QOS :
    q.liveliness == 1 ? fdd::MANUAL_BY_PARTICIPANT_LIVELINESS_QOS :
    fdd::AUTOMATIC_LIVELINESS_QOS;
  if (q.lease_ns >= 0) {
    liveliness.lease_duration = duration(q.lease_ns);
    // As rmw_fastrtps: announce at 2/3 of the lease.
    liveliness.announcement_period = duration(q.lease_ns * 2 / 3);
  }
}

void set_user_data(fdd::UserDataQosPolicy & policy, const char * user_data)
{
  if (user_data != nullptr && user_data[0] != '\0') {
    std::vector<rtps::octet> bytes(user_data, user_data + std::strlen(user_data));
    policy.resize(bytes.size());
    policy.setValue(bytes);
  }
}

// The policies a discovered endpoint announces: 2.x's WriterQos/ReaderQos (m_reliability, ...),
// 3.x's Publication/SubscriptionBuiltinTopicData (reliability, ...).
template<typename Endpoint>
fdds_qos qos_of(const Endpoint & e)
{
#if FASTDDS_VERSION_MAJOR >= 3
  const auto & reliability = e.reliability;
  const auto & durability = e.durability;
  const auto & deadline = e.deadline;
  const auto & lifespan = e.lifespan;
  const auto & liveliness = e.liveliness;
#else
  const auto & reliability = e.m_qos.m_reliability;
  const auto & durability = e.m_qos.m_durability;
  const auto & deadline = e.m_qos.m_deadline;
  const auto & lifespan = e.m_qos.m_lifespan;
  const auto & liveliness = e.m_qos.m_liveliness;
#endif
  fdds_qos out{};
  out.reliable = reliability.kind == fdd::RELIABLE_RELIABILITY_QOS;
  out.transient_local = durability.kind != fdd::VOLATILE_DURABILITY_QOS;
  out.keep_all = 0;
  out.depth = 0;
  out.deadline_ns = nanos(deadline.period);
  out.lifespan_ns = nanos(lifespan.duration);
  out.liveliness = liveliness.kind == fdd::MANUAL_BY_TOPIC_LIVELINESS_QOS ? 2 :
    liveliness.kind == fdd::MANUAL_BY_PARTICIPANT_LIVELINESS_QOS ? 1 : 0;
  out.lease_ns = nanos(liveliness.lease_duration);
  return out;
}

class GraphListener : public fdd::DomainParticipantListener
{
public:
  GraphListener(fdds_endpoint_cb on_endpoint, fdds_participant_gone_cb on_gone, void * ctx)
  : on_endpoint_(on_endpoint), on_gone_(on_gone), ctx_(ctx) {}

#if FASTDDS_VERSION_MAJOR >= 3
  void on_participant_discovery(
    fdd::DomainParticipant *, rtps::ParticipantDiscoveryStatus status,
    const fdd::ParticipantBuiltinTopicData & info, bool &) override
  {
    if (status == rtps::ParticipantDiscoveryStatus::REMOVED_PARTICIPANT ||
      status == rtps::ParticipantDiscoveryStatus::DROPPED_PARTICIPANT)
    {
      participant_gone(info.guid);
    }
  }

  void on_data_reader_discovery(
    fdd::DomainParticipant *, rtps::ReaderDiscoveryStatus status,
    const fdd::SubscriptionBuiltinTopicData & info, bool &) override
  {
    endpoint(
      false, status != rtps::ReaderDiscoveryStatus::REMOVED_READER, info.guid, info.topic_name,
      info.type_name, info.user_data, info);
  }

  void on_data_writer_discovery(
    fdd::DomainParticipant *, rtps::WriterDiscoveryStatus status,
    const fdd::PublicationBuiltinTopicData & info, bool &) override
  {
    endpoint(
      true, status != rtps::WriterDiscoveryStatus::REMOVED_WRITER, info.guid, info.topic_name,
      info.type_name, info.user_data, info);
  }
#else
  void on_participant_discovery(
    fdd::DomainParticipant *, rtps::ParticipantDiscoveryInfo && info) override
  {
    if (info.status == rtps::ParticipantDiscoveryInfo::REMOVED_PARTICIPANT ||
      info.status == rtps::ParticipantDiscoveryInfo::DROPPED_PARTICIPANT)
    {
      participant_gone(info.info.m_guid);
    }
  }

  void on_subscriber_discovery(
    fdd::DomainParticipant *, rtps::ReaderDiscoveryInfo && info) override
  {
    const auto & d = info.info;
    endpoint(
      false, info.status != rtps::ReaderDiscoveryInfo::REMOVED_READER, d.guid(), d.topicName(),
      d.typeName(), d.m_qos.m_userData, d);
  }

  void on_publisher_discovery(
    fdd::DomainParticipant *, rtps::WriterDiscoveryInfo && info) override
  {
    const auto & d = info.info;
    endpoint(
      true, info.status != rtps::WriterDiscoveryInfo::REMOVED_WRITER, d.guid(), d.topicName(),
      d.typeName(), d.m_qos.m_userData, d);
  }
#endif

  // No callback runs once this returns.
  void disable()
  {
    std::lock_guard<std::mutex> lock(mutex_);
    enabled_ = false;
  }

private:
  void participant_gone(const rtps::GUID_t & participant)
  {
    uint8_t guid[16];
    copy_guid(participant, guid);
    std::lock_guard<std::mutex> lock(mutex_);
    if (enabled_) {
      on_gone_(ctx_, guid);
    }
  }

  template<typename Name, typename Endpoint>
  void endpoint(
    bool is_writer, bool alive, const rtps::GUID_t & guid, const Name & topic_name,
    const Name & type, const fdd::UserDataQosPolicy & user_data_policy, const Endpoint & data)
  {
    fdds_endpoint_event event{};
    event.is_writer = is_writer;
    event.alive = alive;
    copy_guid(guid, event.guid);
    rtps::GUID_t participant(guid.guidPrefix, rtps::c_EntityId_RTPSParticipant);
    copy_guid(participant, event.participant);
    std::string topic = topic_name.to_string();
    std::string type_name = type.to_string();
    event.topic = topic.c_str();
    event.type_name = type_name.c_str();
    const auto & user_data = user_data_policy.data_vec();
    event.user_data = user_data.data();
    event.user_data_len = user_data.size();
    event.qos = qos_of(data);
    std::lock_guard<std::mutex> lock(mutex_);
    if (enabled_) {
      on_endpoint_(ctx_, &event);
    }
  }

  fdds_endpoint_cb on_endpoint_;
  fdds_participant_gone_cb on_gone_;
  void * ctx_;
  std::mutex mutex_;
  bool enabled_ = true;
};

}  // namespace

// The most samples a reader takes in one round. A listener call takes one round; a reader with
// samples left goes to its participant's take thread, which takes a round of each such reader in
// turn. A writer faster than the takes holds neither Fast DDS's receive thread (the node's service
// requests and other topics arrive on it) nor the other readers.
constexpr int takes_per_round = 256;

// The participant's take thread: rounds of takes for the readers whose listener call left
// samples, in turn. Started when first needed, stopped with the participant.
class TakeThread
{
public:
  ~TakeThread()
  {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) {
      thread_.join();
    }
  }

  // `reader` has samples left after a round: it gets another, after the others waiting.
  void more(fdds_reader * reader, fdd::DataReader * data_reader);
  // `reader` is going away: it is taken out of the queue, and the thread is done with it when
  // this returns; it is never queued again.
  void forget(fdds_reader * reader);

private:
  void run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<std::pair<fdds_reader *, fdd::DataReader *>> queue_;
  fdds_reader * busy_ = nullptr;
  bool stopping_ = false;
  std::thread thread_;
};

struct fdds_participant
{
  // Declared first: destroyed last, after nothing can queue a reader any more.
  TakeThread takes;
  fdd::DomainParticipant * participant = nullptr;
  fdd::Publisher * publisher = nullptr;
  fdd::Subscriber * subscriber = nullptr;
  std::unique_ptr<GraphListener> listener;
  bool qos_from_xml = false;
  bool asynchronous = false;
  std::mutex mutex;
  std::map<std::string, fdd::Topic *> topics;

  // The topic `name` of `type_name`, created (and its type registered) once.
  fdd::Topic * topic(const std::string & name, const std::string & type_name)
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto found = topics.find(name);
    if (found != topics.end()) {
      if (found->second->get_type_name() != type_name) {
        fail("topic " + name + " exists with type " + found->second->get_type_name());
        return nullptr;
      }
      return found->second;
    }
    if (!participant->find_type(type_name).empty()) {
      // registered for another topic already
    } else {
      fdd::TypeSupport type(new RawType(type_name));
      if (!ok(type.register_type(participant))) {
        fail("cannot register type " + type_name);
        return nullptr;
      }
    }
    fdd::Topic * topic = participant->create_topic(name, type_name, fdd::TOPIC_QOS_DEFAULT);
    if (topic == nullptr) {
      fail("cannot create topic " + name);
      return nullptr;
    }
    topics.emplace(name, topic);
    return topic;
  }
};

struct fdds_writer : public fdd::DataWriterListener
{
  fdds_participant * owner = nullptr;
  fdd::DataWriter * writer = nullptr;
  std::mutex mutex;
  std::condition_variable changed;
  std::set<rtps::GUID_t> matched;

  void on_publication_matched(
    fdd::DataWriter *, const fdd::PublicationMatchedStatus & status) override
  {
    rtps::GUID_t guid = rtps::iHandle2GUID(status.last_subscription_handle);
    std::lock_guard<std::mutex> lock(mutex);
    if (status.current_count_change > 0) {
      matched.insert(guid);
    } else if (status.current_count_change < 0) {
      matched.erase(guid);
    }
    changed.notify_all();
  }
};

namespace
{

void linger(fdds_writer * w)
{
  fdd::PublicationMatchedStatus status;
  w->writer->get_publication_matched_status(status);
  if (status.current_count > 0) {
    w->writer->wait_for_acknowledgments(writer_linger);
  }
}

void linger_at_exit()
{
  std::lock_guard<std::mutex> lock(live_writers_mutex);
  for (fdds_writer * w : live_writers) {
    linger(w);
  }
}

}  // namespace

struct fdds_reader : public fdd::DataReaderListener
{
  fdds_participant * owner = nullptr;
  fdd::DataReader * reader = nullptr;
  fdds_sample_cb on_sample = nullptr;
  void * ctx = nullptr;
  std::mutex mutex;
  bool enabled = true;
  // Guarded by the take thread's mutex: in its queue; going away (never queued again).
  bool queued = false;
  bool forgotten = false;

  // Takes up to takes_per_round samples and hands each on; true if the round ended with samples
  // maybe left. The listener passes `from_listener`: Fast DDS calls it holding the reader's own
  // lock, which every take needs, so it must not wait for the take thread (which holds `mutex`
  // while it takes): when that one is busy with this reader, the reader is only queued again.
  bool take_round(fdd::DataReader * r, bool from_listener)
  {
    std::unique_lock<std::mutex> lock(mutex, std::defer_lock);
    if (!from_listener) {
      lock.lock();
    } else if (!lock.try_lock()) {
      return true;
    }
    std::vector<uint8_t> buffer;
    fdd::SampleInfo info;
    for (int taken = 0; taken < takes_per_round; ++taken) {
      if (!enabled || !ok(r->take_next_sample(&buffer, &info))) {
        return false;
      }
      if (!info.valid_data) {
        continue;
      }
      fdds_sample_identity identity;
      fdds_sample_identity related;
      copy_identity(info.sample_identity, &identity);
      copy_identity(info.related_sample_identity, &related);
      int64_t stamp = static_cast<int64_t>(info.source_timestamp.seconds()) * 1000000000 +
        info.source_timestamp.nanosec();
      on_sample(ctx, buffer.data(), buffer.size(), &identity, &related, stamp);
    }
    return enabled;
  }

  void on_data_available(fdd::DataReader * r) override
  {
    if (take_round(r, true)) {
      owner->takes.more(this, r);
    }
  }
};

void TakeThread::more(fdds_reader * reader, fdd::DataReader * data_reader)
{
  std::lock_guard<std::mutex> lock(mutex_);
  if (reader->queued || reader->forgotten || stopping_) {
    return;
  }
  reader->queued = true;
  queue_.emplace_back(reader, data_reader);
  if (!thread_.joinable()) {
    thread_ = std::thread([this] {run();});
  }
  wake_.notify_one();
}

void TakeThread::forget(fdds_reader * reader)
{
  std::unique_lock<std::mutex> lock(mutex_);
  reader->forgotten = true;
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (it->first == reader) {
      queue_.erase(it);
      break;
    }
  }
  reader->queued = false;
  idle_.wait(lock, [&] {return busy_ != reader;});
}

void TakeThread::run()
{
  // Named as ours: it would inherit the name of the Fast DDS thread that started it.
  pthread_setname_np(pthread_self(), "fastdds-take");
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] {return stopping_ || !queue_.empty();});
    if (stopping_) {
      return;
    }
    fdds_reader * reader = queue_.front().first;
    fdd::DataReader * data_reader = queue_.front().second;
    queue_.pop_front();
    reader->queued = false;
    busy_ = reader;
    lock.unlock();
    bool left = reader->take_round(data_reader, false);
    lock.lock();
    busy_ = nullptr;
    if (left && !reader->forgotten && !reader->queued) {
      reader->queued = true;
      queue_.emplace_back(reader, data_reader);
    }
    idle_.notify_all();
  }
}

extern "C" {

const char * fdds_last_error(void)
{
  return last_error.c_str();
}

const char * fdds_version(void)
{
  return FASTDDS_VERSION_STR;
}

fdds_participant * fdds_participant_new(
  const fdds_participant_config * config, const char * user_data, fdds_endpoint_cb on_endpoint,
  fdds_participant_gone_cb on_participant_gone, void * ctx)
{
  try {
    auto * factory = fdd::DomainParticipantFactory::get_instance();
    // Registered after the factory exists, so it runs before the factory's destructor.
    static const int registered = std::atexit(linger_at_exit);
    (void)registered;
    // The XML profiles of FASTRTPS_DEFAULT_PROFILES_FILE / FASTDDS_DEFAULT_PROFILES_FILE (and
    // ./DEFAULT_FASTRTPS_PROFILES.xml), as rmw_fastrtps loads them.
    factory->load_profiles();
    fdd::DomainParticipantQos qos = factory->get_default_participant_qos();
    auto & builtin = qos.wire_protocol().builtin;
    if (config->range == 0 || config->range == 1) {
      // No multicast discovery; a unicast locator keeps the default multicast one away.
      builtin.metatrafficMulticastLocatorList.clear();
      builtin.metatrafficUnicastLocatorList.push_back(rtps::Locator_t());
    }
    if (config->range == 0) {
      qos.allocation().participants.initial = 1;
      qos.allocation().participants.maximum = 1;
      qos.allocation().participants.increment = 0;
    } else if (config->range == 1) {
      qos.transport().use_builtin_transports = false;
      qos.transport().user_transports.push_back(
        std::make_shared<eprosima::fastdds::rtps::SharedMemTransportDescriptor>());
      auto udp = std::make_shared<eprosima::fastdds::rtps::UDPv4TransportDescriptor>();
      udp->maxInitialPeersRange = 32;
      qos.transport().user_transports.push_back(udp);
    }
    if (config->range == 1 || config->range == 2) {
      std::stringstream peers(config->static_peers ? config->static_peers : "");
      std::string peer;
      while (std::getline(peers, peer, ';')) {
        if (peer.empty()) {
          continue;
        }
        auto resolved = rtps::IPLocator::resolveNameDNS(peer);
        if (resolved.first.empty()) {
          fail("cannot resolve ROS_STATIC_PEERS entry " + peer);
          return nullptr;
        }
        rtps::Locator_t locator;
        rtps::IPLocator::setIPv4(locator, *resolved.first.begin());
        builtin.initialPeersList.push_back(locator);
      }
    }
    if (config->range == 1) {
      rtps::Locator_t localhost;
      rtps::IPLocator::setIPv4(localhost, "127.0.0.1");
      builtin.initialPeersList.push_back(localhost);
    }
    if (config->range == 2 && !builtin.initialPeersList.empty()) {
      rtps::Locator_t multicast;
      rtps::IPLocator::setIPv4(multicast, 239, 255, 0, 1);
      builtin.initialPeersList.push_back(multicast);
    }
    set_user_data(qos.user_data(), user_data);
    qos.name("/");
    if (!config->qos_from_xml) {
      builtin.readerHistoryMemoryPolicy = rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
      builtin.writerHistoryMemoryPolicy = rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
    }
    auto out = std::make_unique<fdds_participant>();
    out->qos_from_xml = config->qos_from_xml != 0;
    out->asynchronous = config->asynchronous != 0;
    out->listener = std::make_unique<GraphListener>(on_endpoint, on_participant_gone, ctx);
    out->participant = factory->create_participant(
      config->domain_id, qos, out->listener.get(), fdd::StatusMask::none());
    if (out->participant == nullptr) {
      fail("cannot create the Fast DDS participant");
      return nullptr;
    }
    out->publisher = out->participant->create_publisher(fdd::PUBLISHER_QOS_DEFAULT);
    out->subscriber = out->participant->create_subscriber(fdd::SUBSCRIBER_QOS_DEFAULT);
    if (out->publisher == nullptr || out->subscriber == nullptr) {
      fail("cannot create the Fast DDS publisher/subscriber");
      out->listener->disable();
      out->participant->delete_contained_entities();
      factory->delete_participant(out->participant);
      return nullptr;
    }
    return out.release();
  } catch (const std::exception & e) {
    fail(std::string("Fast DDS: ") + e.what());
    return nullptr;
  }
}

void fdds_participant_delete(fdds_participant * p)
{
  if (p == nullptr) {
    return;
  }
  p->listener->disable();
  p->participant->set_listener(nullptr);
  p->participant->delete_contained_entities();
  fdd::DomainParticipantFactory::get_instance()->delete_participant(p->participant);
  delete p;
}

void fdds_participant_guid(const fdds_participant * p, uint8_t * guid)
{
  copy_guid(p->participant->guid(), guid);
}

fdds_writer * fdds_writer_new(
  fdds_participant * p, const char * topic_name, const char * type_name, const fdds_qos * q,
  const char * user_data)
{
  try {
    fdd::Topic * topic = p->topic(topic_name, type_name);
    if (topic == nullptr) {
      return nullptr;
    }
    fdd::DataWriterQos qos = p->publisher->get_default_datawriter_qos();
    if (!p->qos_from_xml) {
      qos.publish_mode().kind = p->asynchronous ?
        fdd::ASYNCHRONOUS_PUBLISH_MODE : fdd::SYNCHRONOUS_PUBLISH_MODE;
      qos.endpoint().history_memory_policy = rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
      qos.data_sharing().off();
      // A sample a reader missed (a full shared-memory port while a large burst is written)
      // is sent again at the writer's next heartbeat: Fast DDS's default of 3 s made a service
      // reply lost that way take 3 s (docs/benchmarks.md, "Player: services while it works").
      fdds_compat::heartbeat_period(qos.reliable_writer_qos().times) =
        Duration(0, HEARTBEAT_PERIOD_NS);
    }
    set_qos_common(
      *q, qos.history(), qos.reliability(), qos.durability(), qos.deadline(), qos.lifespan(),
      qos.liveliness());
    set_user_data(qos.user_data(), user_data);
    auto out = std::make_unique<fdds_writer>();
    out->owner = p;
    out->writer = p->publisher->create_datawriter(
      topic, qos, out.get(), fdd::StatusMask::publication_matched());
    if (out->writer == nullptr) {
      fail(std::string("cannot create a Fast DDS writer on ") + topic_name);
      return nullptr;
    }
    std::lock_guard<std::mutex> lock(live_writers_mutex);
    live_writers.insert(out.get());
    return out.release();
  } catch (const std::exception & e) {
    fail(std::string("Fast DDS: ") + e.what());
    return nullptr;
  }
}

void fdds_writer_delete(fdds_writer * w)
{
  if (w == nullptr) {
    return;
  }
  {
    std::lock_guard<std::mutex> lock(live_writers_mutex);
    live_writers.erase(w);
  }
  linger(w);
  w->writer->set_listener(nullptr);
  w->owner->publisher->delete_datawriter(w->writer);
  delete w;
}

void fdds_writer_guid(const fdds_writer * w, uint8_t * guid)
{
  copy_guid(w->writer->guid(), guid);
}

int32_t fdds_writer_write(
  fdds_writer * w, const uint8_t * data, size_t len, const fdds_sample_identity * related,
  fdds_sample_identity * written)
{
  RawSample sample{data, len};
  rtps::WriteParams params;
  if (related != nullptr) {
    rtps::SampleIdentity identity;
    identity.writer_guid(to_guid(related->guid));
    rtps::SequenceNumber_t sn;
    sn.high = static_cast<int32_t>(related->sequence_number >> 32);
    sn.low = static_cast<uint32_t>(related->sequence_number & 0xFFFFFFFF);
    identity.sequence_number(sn);
    params.related_sample_identity(identity);
  }
  if (!ok(w->writer->write(&sample, params))) {
    fail("Fast DDS write failed");
    return -1;
  }
  if (written != nullptr) {
    copy_identity(params.sample_identity(), written);
  }
  return 0;
}

int32_t fdds_writer_write_at(
  fdds_writer * w, const uint8_t * data, size_t len, int64_t timestamp_ns)
{
  RawSample sample{data, len};
  fdds_compat::Time stamp(
    static_cast<int32_t>(timestamp_ns / 1000000000),
    static_cast<uint32_t>(timestamp_ns % 1000000000));
  if (!ok(w->writer->write_w_timestamp(&sample, rtps::c_InstanceHandle_Unknown, stamp))) {
    fail("Fast DDS write failed");
    return -1;
  }
  return 0;
}

int32_t fdds_writer_matched(const fdds_writer * w)
{
  fdd::PublicationMatchedStatus status;
  w->writer->get_publication_matched_status(status);
  return status.current_count;
}

int32_t fdds_writer_wait_matched(fdds_writer * w, const uint8_t * reader_guid, int64_t timeout_ns)
{
  rtps::GUID_t guid = to_guid(reader_guid);
  std::unique_lock<std::mutex> lock(w->mutex);
  return w->changed.wait_for(
    lock, std::chrono::nanoseconds(timeout_ns),
    [&]() {return w->matched.count(guid) > 0;}) ? 1 : 0;
}

int32_t fdds_writer_wait_for_acks(fdds_writer * w, int64_t timeout_ns)
{
  return ok(w->writer->wait_for_acknowledgments(duration(timeout_ns)));
}

fdds_reader * fdds_reader_new(
  fdds_participant * p, const char * topic_name, const char * type_name, const fdds_qos * q,
  const char * user_data, fdds_sample_cb on_sample, void * ctx)
{
  try {
    fdd::Topic * topic = p->topic(topic_name, type_name);
    if (topic == nullptr) {
      return nullptr;
    }
    fdd::DataReaderQos qos = p->subscriber->get_default_datareader_qos();
    if (!p->qos_from_xml) {
      qos.endpoint().history_memory_policy = rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
      qos.data_sharing().off();
    }
    set_qos_common(
      *q, qos.history(), qos.reliability(), qos.durability(), qos.deadline(), qos.lifespan(),
      qos.liveliness());
    set_user_data(qos.user_data(), user_data);
    auto out = std::make_unique<fdds_reader>();
    out->owner = p;
    out->on_sample = on_sample;
    out->ctx = ctx;
    out->reader = p->subscriber->create_datareader(
      topic, qos, out.get(), fdd::StatusMask::data_available());
    if (out->reader == nullptr) {
      fail(std::string("cannot create a Fast DDS reader on ") + topic_name);
      return nullptr;
    }
    return out.release();
  } catch (const std::exception & e) {
    fail(std::string("Fast DDS: ") + e.what());
    return nullptr;
  }
}

void fdds_reader_delete(fdds_reader * r)
{
  if (r == nullptr) {
    return;
  }
  {
    std::lock_guard<std::mutex> lock(r->mutex);
    r->enabled = false;
  }
  r->owner->takes.forget(r);
  r->reader->set_listener(nullptr);
  r->owner->subscriber->delete_datareader(r->reader);
  delete r;
}

void fdds_reader_guid(const fdds_reader * r, uint8_t * guid)
{
  copy_guid(r->reader->guid(), guid);
}

int32_t fdds_reader_matched(const fdds_reader * r)
{
  fdd::SubscriptionMatchedStatus status;
  r->reader->get_subscription_matched_status(status);
  return status.current_count;
}

}  // extern "C"
