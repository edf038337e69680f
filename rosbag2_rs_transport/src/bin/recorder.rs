//! `recorder`: the rosbag2-rs recorder node (`ros2 run rosbag2_rs_transport recorder ...`), with
//! the flags of `ros2 bag record` and the snapshot mode. From `--ros-args` (as `ros2 launch`
//! appends them) it takes the node name and namespace (`-r __node:=`, `-r __ns:=`) and rosbag2's
//! recorder parameters (`-p record.all_topics:=true`, `--params-file`, `storage.uri`, ...).

fn main() {
    rosbag2_rs_transport::node_main::<rosbag2_rs_transport::RecorderNode>()
}
