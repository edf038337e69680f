// What differs between the Fast DDS versions the shim builds against: 2.x (Debian's 2.9, ROS 2
// Jazzy's 2.14; library libfastrtps, namespace eprosima::fastrtps) and 3.x (ROS 2 Kilted's 3.2;
// library libfastdds, everything under eprosima::fastdds). The names shim.cpp uses are defined
// here once per version; the few API differences left (TopicDataType, discovery callbacks) are
// version blocks in shim.cpp keyed on FASTDDS_VERSION_MAJOR.

#ifndef ROSBAG2_RS_FASTDDS_COMPAT_HPP
#define ROSBAG2_RS_FASTDDS_COMPAT_HPP

#if __has_include(<fastdds/config.hpp>)
#include <fastdds/config.hpp>
#else
// 2.x: the version macros are FASTRTPS_*.
#include <fastrtps/config.h>
#define FASTDDS_VERSION_MAJOR FASTRTPS_VERSION_MAJOR
#define FASTDDS_VERSION_STR FASTRTPS_VERSION_STR
#endif

#include <fastdds/dds/core/policy/QosPolicies.hpp>

#if FASTDDS_VERSION_MAJOR >= 3
#include <fastdds/dds/builtin/topic/ParticipantBuiltinTopicData.hpp>
#include <fastdds/dds/builtin/topic/PublicationBuiltinTopicData.hpp>
#include <fastdds/dds/builtin/topic/SubscriptionBuiltinTopicData.hpp>
#include <fastdds/dds/core/ReturnCode.hpp>
#include <fastdds/dds/core/Time_t.hpp>
#include <fastdds/rtps/attributes/WriterAttributes.hpp>
#include <fastdds/rtps/common/WriteParams.hpp>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.hpp>
#include <fastdds/rtps/transport/shared_mem/SharedMemTransportDescriptor.hpp>
#include <fastdds/utils/IPLocator.hpp>
#else
#include <fastdds/rtps/attributes/WriterAttributes.h>
#include <fastdds/rtps/common/WriteParams.h>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastdds/rtps/transport/shared_mem/SharedMemTransportDescriptor.h>
#include <fastrtps/types/TypesBase.h>
#include <fastrtps/utils/IPLocator.h>
#endif

namespace fdds_compat
{

#if FASTDDS_VERSION_MAJOR >= 3
namespace rtps = eprosima::fastdds::rtps;
using Duration = eprosima::fastdds::dds::Duration_t;
using Time = eprosima::fastdds::dds::Time_t;
using ReturnCode = eprosima::fastdds::dds::ReturnCode_t;
inline const Duration & time_infinite() {return eprosima::fastdds::dds::c_TimeInfinite;}
inline bool ok(ReturnCode rc) {return rc == eprosima::fastdds::dds::RETCODE_OK;}
inline Duration & heartbeat_period(rtps::WriterTimes & t)
{
  return t.heartbeat_period;
}
#else
namespace rtps = eprosima::fastrtps::rtps;
using Duration = eprosima::fastrtps::Duration_t;
using Time = eprosima::fastrtps::Time_t;
using ReturnCode = eprosima::fastrtps::types::ReturnCode_t;
inline const Duration & time_infinite() {return eprosima::fastrtps::c_TimeInfinite;}
inline bool ok(const ReturnCode & rc) {return rc == ReturnCode::RETCODE_OK;}
// 2.x's DataWriter::write(data, params) answers a bool.
inline bool ok(bool written) {return written;}
inline Duration & heartbeat_period(rtps::WriterTimes & t)
{
  return t.heartbeatPeriod;
}
#endif

}  // namespace fdds_compat

#endif  // ROSBAG2_RS_FASTDDS_COMPAT_HPP
