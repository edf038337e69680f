#!/usr/bin/env bash
# Builds the rosidl packages the rclpy peers of the interop tests need and PyPI has no wheel of:
# rosbag2_interfaces (from the copies under rosbag2_rs_interfaces/rosbag2_interfaces) and our own
# rosbag2_rs_interfaces, with colcon, ament_cmake and the rosidl generators of the ROS 2 venv
# (tests/requirements-ros2*.txt).
#
#   tools/build_ros2_interfaces.sh VENV INSTALL_DIR
#
# Use the result with AMENT_PREFIX_PATH=INSTALL_DIR:VENV, LD_LIBRARY_PATH=INSTALL_DIR/lib:VENV/lib
# and PYTHONPATH=INSTALL_DIR/lib/python3.X/site-packages.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=$(cd "$1" && pwd)
mkdir -p "$2"
install=$(cd "$2" && pwd)
ws=$(mktemp -d)
trap 'rm -rf "$ws"' EXIT
mkdir -p "$ws/src/rosbag2_interfaces" "$ws/src/rosbag2_rs_interfaces"
cp -r "$root/tests/ros2_interfaces/rosbag2_interfaces/." "$root/rosbag2_rs_interfaces/rosbag2_interfaces/msg" \
  "$root/rosbag2_rs_interfaces/rosbag2_interfaces/srv" "$ws/src/rosbag2_interfaces/"
cp -r "$root/rosbag2_rs_interfaces/package.xml" "$root/rosbag2_rs_interfaces/CMakeLists.txt" \
  "$root/rosbag2_rs_interfaces/msg" "$root/rosbag2_rs_interfaces/srv" "$ws/src/rosbag2_rs_interfaces/"
# The wheels were built in a manylinux image: their CMake exports name that image's Python
# headers. Point them at this venv's Python (once; the venv is the tests' own: a second run finds
# nothing to rewrite).
py_include=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
np_include=$("$venv/bin/python" -c 'import numpy; print(numpy.get_include())')
{ grep -rlZ --include='*.cmake' '/opt/python/cp' "$venv/share" || true; } | xargs -0 -r sed -i -E \
  -e "s#/opt/python/cp[0-9]+-cp[0-9]+/include/python3\.[0-9]+#$py_include#g" \
  -e "s#/opt/python/cp[0-9]+-cp[0-9]+/lib/python3\.[0-9]+/site-packages/numpy/_core/include#$np_include#g"
export AMENT_PREFIX_PATH=$venv CMAKE_PREFIX_PATH=$venv LD_LIBRARY_PATH=$venv/lib PATH=$venv/bin:$PATH
(cd "$ws" && colcon --log-base "$ws/log" build --base-paths "$ws/src" --build-base "$ws/build" \
   --install-base "$install" --merge-install \
   --cmake-args -DBUILD_TESTING=OFF "-DPython3_EXECUTABLE=$venv/bin/python" >"$ws/colcon.log" 2>&1) \
  || { tail -n 60 "$ws/colcon.log"; exit 1; }
