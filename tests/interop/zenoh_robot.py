"""The "robot" of the two-machine Zenoh test: a Zenoh router (configured as rmw_zenohd) and a
Python rmw_zenoh-format publisher of 1 MB sensor_msgs/Image at 30 Hz, in its own network
namespace. Prints `ready`, `half` (half published), then `sent N` and exits."""
import argparse
import sys
import time

import numpy as np
import zenoh

import rmw_zenoh_peer as rz


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--listen', required=True)
    ap.add_argument('--count', type=int, default=120)
    ap.add_argument('--size', type=int, default=1_000_000)
    ap.add_argument('--rate', type=float, default=30.0)
    args = ap.parse_args()
    router = zenoh.open(rz.router_config(args.listen))
    node = rz.Node('camera', connect=args.listen)
    # Keep-last reliable, as a camera driver offers: the publisher drops (congestion control DROP)
    # rather than block while the link is down.
    pub = node.publisher('/camera/image', 'sensor_msgs/msg/Image', rz.IMAGE_HASH, depth=5)
    print('ready', flush=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if any(rz.parse_token(t).get('topic') == '/camera/image' and rz.parse_token(t)['kind'] == 'MS'
               for t in node.graph()):
            break
        time.sleep(0.1)
    from rosbags.typesys import Stores, get_typestore
    ts = get_typestore(Stores.ROS2_JAZZY)
    Image, Header, Stamp = (ts.types[t] for t in ('sensor_msgs/msg/Image', 'std_msgs/msg/Header',
                                                  'builtin_interfaces/msg/Time'))
    width = args.size // 300
    for i in range(args.count):
        msg = Image(header=Header(stamp=Stamp(sec=i, nanosec=0), frame_id='cam'), height=100, width=width,
                    encoding='rgb8', is_bigendian=0, step=width * 3,
                    data=np.full(width * 300, i % 256, dtype=np.uint8))
        payload = bytes(ts.serialize_cdr(msg, 'sensor_msgs/msg/Image'))
        pub.publish(payload)
        if i == args.count // 2:
            print('half', flush=True)
        time.sleep(1 / args.rate)
    print(f'sent {args.count}', flush=True)
    time.sleep(3)
    node.close()
    router.close()


if __name__ == '__main__':
    sys.exit(main())
