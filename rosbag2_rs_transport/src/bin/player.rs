//! `player`: plays bags onto the ROS 2 graph (`ros2 run rosbag2_rs_transport player BAG ...`).
//! Takes the flags of `ros2 bag play`. From `--ros-args` (as `ros2 launch` appends them) it takes
//! the node name and namespace (`-r __node:=`, `-r __ns:=`), topic remaps (`-r from:=to`) and
//! rosbag2's player parameters (`-p play.rate:=2.0`, `--params-file`, `storage.uri` for the bag).

fn main() {
    rosbag2_rs_transport::node_main::<rosbag2_rs_transport::PlayerNode>()
}
