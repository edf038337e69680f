"""The RealSense SDK (pyrealsense2) as a peer, without a camera.

    sdk_peer.py record PATH [FRAMES]   # a software device (depth Z16, infrared Y8, color RGB8, accel,
                                       # gyro) recorded by rs.recorder; PATH's extension picks the
                                       # format (.bag with SDK 2.57, .db3 with 2.59)
    sdk_peer.py record-full PATH [FRAMES]  # depth Z16 + infrared Y8 at 30 fps and accel + gyro at
                                       # 200 Hz, three options per sensor, Exposure changed
                                       # 8500 -> 999 halfway through, extrinsics, a notification
    sdk_peer.py record-pose PATH [FRAMES]  # a software pose sensor (6DoF at 200 Hz) and a gyro
    sdk_peer.py record-formats PATH [FRAMES]  # one sensor per video format beyond depth/IR/RGB
                                       # (BGR8, RGBA8, BGRA8, Y16, YUYV, UYVY, RAW16) at 30 fps
    sdk_peer.py pipeline PATH          # rs.config.enable_device_from_file + rs.pipeline: prints
                                       # JSON: the streams of the framesets delivered until the
                                       # file ends (the pipeline's syncer may drop some frames)
    sdk_peer.py record-hd PATH FRAMES  # 1280x720 depth (Z16) + color (RGB8) at 30 fps, for the benchmark
    sdk_peer.py play-speed PATH        # times the SDK's non-real-time playback of every frame:
                                       # prints `seconds frames bytes`
    sdk_peer.py dump PATH              # the SDK's own playback of PATH (non-real time): one JSON
                                       # object: device info, sensors, options, profiles,
                                       # intrinsics, extrinsics, then every frame in arrival order

Frames carry known content: pixel values derived from the frame number, timestamps 33.333 ms
apart (video) and 5 ms apart (motion), hardware-clock domain for depth/infrared, system time for
color, global time for motion, and frame-counter / sensor-timestamp metadata.
"""
import zlib
import json
import sys
import time

import pyrealsense2 as rs

W, H = 64, 48
T0 = 1_000.0  # ms, device time of the first frame


def video_profile(sensor, stream, index, uid, fmt, bpp, fx):
    vs = rs.video_stream()
    vs.type, vs.index, vs.uid = stream, index, uid
    vs.width, vs.height, vs.fps, vs.bpp, vs.fmt = W, H, 30, bpp, fmt
    intr = rs.intrinsics()
    intr.width, intr.height = W, H
    intr.ppx, intr.ppy, intr.fx, intr.fy = W / 2 + 0.25, H / 2 - 0.5, fx, fx + 1.5
    intr.model = rs.distortion.brown_conrady
    intr.coeffs = [0.1, -0.05, 0.001, 0.002, 0.0]
    vs.intrinsics = intr
    return sensor.add_video_stream(vs)


def vector(x, y, z):
    """An rs.vector (set whole: `frame.data.x = ...` would change a copy)."""
    v = rs.vector()
    v.x, v.y, v.z = x, y, z
    return v


def motion_profile(sensor, stream, uid, fps):
    ms = rs.motion_stream()
    ms.type, ms.index, ms.uid, ms.fps, ms.fmt = stream, 0, uid, fps, rs.format.motion_xyz32f
    intr = rs.motion_device_intrinsic()
    intr.data = [[1.0, 0.01, 0.02, 0.1], [0.03, 1.0, 0.04, 0.2], [0.05, 0.06, 1.0, 0.3]]
    intr.noise_variances = [0.001, 0.002, 0.003]
    intr.bias_variances = [0.004, 0.005, 0.006]
    ms.intrinsics = intr
    return sensor.add_motion_stream(ms)


def record(path, frames):
    dev = rs.software_device()
    dev.register_info(rs.camera_info.name, 'rosbag2-rs test camera')
    dev.register_info(rs.camera_info.serial_number, '0123456789')
    dev.register_info(rs.camera_info.firmware_version, '5.16.0.1')
    depth = dev.add_sensor('Stereo Module')
    color = dev.add_sensor('RGB Camera')
    motion = dev.add_sensor('Motion Module')
    p_depth = video_profile(depth, rs.stream.depth, 0, 0, rs.format.z16, 2, 40.0)
    p_ir = video_profile(depth, rs.stream.infrared, 1, 1, rs.format.y8, 1, 40.0)
    p_color = video_profile(color, rs.stream.color, 0, 2, rs.format.rgb8, 3, 50.0)
    p_accel = motion_profile(motion, rs.stream.accel, 3, 200)
    p_gyro = motion_profile(motion, rs.stream.gyro, 4, 200)
    depth.add_read_only_option(rs.option.depth_units, 0.001)
    depth.add_option(rs.option.exposure, rs.option_range(1, 10000, 1, 8500), True)
    color.add_option(rs.option.gain, rs.option_range(0, 128, 1, 64), True)
    ext = rs.extrinsics()
    ext.rotation = [1, 0, 0, 0, 1, 0, 0, 0, 1]
    ext.translation = [0.015, 0.0, 0.0]
    p_depth.register_extrinsics_to(p_color, ext)
    p_depth.register_extrinsics_to(p_ir, ext)
    p_depth.register_extrinsics_to(p_accel, ext)
    p_depth.register_extrinsics_to(p_gyro, ext)

    recorder = rs.recorder(path, dev)
    queue = rs.frame_queue(10000)
    depth.open([p_depth, p_ir])
    color.open(p_color)
    motion.open([p_accel, p_gyro])
    for s in (depth, color, motion):
        s.start(queue)
    keep = []
    for i in range(frames):
        t = T0 + i * 1000.0 / 30
        for sensor, profile, bpp, domain in ((depth, p_depth, 2, rs.timestamp_domain.hardware_clock),
                                             (depth, p_ir, 1, rs.timestamp_domain.hardware_clock),
                                             (color, p_color, 3, rs.timestamp_domain.system_time)):
            pixels = bytes((i * 7 + k * bpp + profile.stream_type().value) % 251 for k in range(W * H * bpp))
            keep.append(pixels)
            f = rs.software_video_frame()
            f.pixels, f.stride, f.bpp = pixels, W * bpp, bpp
            f.timestamp, f.domain, f.frame_number = t, domain, i + 1
            f.profile = profile.as_video_stream_profile()
            sensor.set_metadata(rs.frame_metadata_value.frame_counter, i + 1)
            sensor.set_metadata(rs.frame_metadata_value.sensor_timestamp, int(t * 1000))
            sensor.on_video_frame(f)
        for k in range(6):
            for profile, scale in ((p_accel, 9.81), (p_gyro, 0.5)):
                m = rs.software_motion_frame()
                m.data = vector(scale * i, scale * k, -scale)
                m.timestamp = t + k * 5.0
                m.domain = rs.timestamp_domain.global_time
                m.frame_number = i * 6 + k + 1
                m.profile = profile.as_motion_stream_profile()
                motion.on_motion_frame(m)
        time.sleep(0.01)
    time.sleep(0.5)
    for s in (depth, color, motion):
        s.stop()
        s.close()
    del recorder


def record_full(path, frames):
    """The issue's recording: two sensors at their true rates, options that change, extrinsics."""
    dev = rs.software_device()
    dev.register_info(rs.camera_info.name, 'rosbag2-rs full camera')
    dev.register_info(rs.camera_info.serial_number, '9876543210')
    dev.register_info(rs.camera_info.firmware_version, '5.16.0.1')
    stereo = dev.add_sensor('Stereo Module')
    motion = dev.add_sensor('Motion Module')
    p_depth = video_profile(stereo, rs.stream.depth, 0, 0, rs.format.z16, 2, 40.0)
    p_ir = video_profile(stereo, rs.stream.infrared, 1, 1, rs.format.y8, 1, 40.0)
    p_accel = motion_profile(motion, rs.stream.accel, 2, 200)
    p_gyro = motion_profile(motion, rs.stream.gyro, 3, 200)
    stereo.add_read_only_option(rs.option.depth_units, 0.001)
    # option_range's constructor takes (min, max, default, step), whatever its docstring says.
    stereo.add_option(rs.option.exposure, rs.option_range(1, 10000, 8500, 1), True)
    stereo.add_option(rs.option.gain, rs.option_range(0, 248, 64, 1), True)
    motion.add_option(rs.option.enable_motion_correction, rs.option_range(0, 2, 1, 1), True)
    motion.add_option(rs.option.global_time_enabled, rs.option_range(0, 2, 1, 1), True)
    motion.add_read_only_option(rs.option.frames_queue_size, 16)
    stereo.set_option(rs.option.exposure, 8500)
    stereo.set_option(rs.option.gain, 32)
    motion.set_option(rs.option.enable_motion_correction, 1)
    motion.set_option(rs.option.global_time_enabled, 1)
    ext = rs.extrinsics()
    ext.rotation = [0, 1, 0, -1, 0, 0, 0, 0, 1]
    ext.translation = [0.015, -0.002, 0.001]
    p_depth.register_extrinsics_to(p_ir, ext)
    p_depth.register_extrinsics_to(p_accel, ext)
    p_depth.register_extrinsics_to(p_gyro, ext)

    recorder = rs.recorder(path, dev)
    rec_stereo = recorder.query_sensors()[0]
    queue = rs.frame_queue(100000)
    stereo.open([p_depth, p_ir])
    motion.open([p_accel, p_gyro])
    for s in (stereo, motion):
        s.start(queue)
    keep = []
    sample = 0
    for i in range(frames):
        if i == frames // 2:
            stereo.set_option(rs.option.exposure, 999)
            n = rs.software_notification()
            n.category, n.severity = rs.notification_category.frame_corrupted, rs.log_severity.warn
            n.description, n.serialized_data = 'a test notification', '{"frame": %d}' % i
            stereo.on_notification(n)
        t = T0 + i * 1000.0 / 30
        for profile, bpp in ((p_depth, 2), (p_ir, 1)):
            pixels = bytes((i * 7 + k * bpp + profile.stream_type().value) % 251 for k in range(W * H * bpp))
            keep.append(pixels)
            f = rs.software_video_frame()
            f.pixels, f.stride, f.bpp = pixels, W * bpp, bpp
            f.timestamp, f.domain, f.frame_number = t, rs.timestamp_domain.hardware_clock, i + 1
            f.profile = profile.as_video_stream_profile()
            stereo.set_metadata(rs.frame_metadata_value.frame_counter, i + 1)
            stereo.set_metadata(rs.frame_metadata_value.sensor_timestamp, int(t * 1000))
            stereo.on_video_frame(f)
        # 200 Hz: samples 5 ms apart up to the next video frame.
        while T0 + sample * 5.0 < t + 1000.0 / 30 - 1e-6:
            for profile, scale in ((p_accel, 9.81), (p_gyro, 0.5)):
                m = rs.software_motion_frame()
                m.data = vector(scale * sample, scale * i, -scale)
                m.timestamp = T0 + sample * 5.0
                m.domain = rs.timestamp_domain.global_time
                m.frame_number = sample + 1
                m.profile = profile.as_motion_stream_profile()
                motion.on_motion_frame(m)
            sample += 1
        time.sleep(1.0 / 30)
    time.sleep(0.5)
    for s in (stereo, motion):
        s.stop()
        s.close()
    del recorder


def record_pose(path, frames):
    """A tracking camera: 6DoF pose frames (position, orientation, their derivatives, confidences)."""
    dev = rs.software_device()
    dev.register_info(rs.camera_info.name, 'rosbag2-rs pose camera')
    dev.register_info(rs.camera_info.serial_number, '555')
    tracking = dev.add_sensor('Tracking Module')
    ps = rs.pose_stream()
    ps.type, ps.index, ps.uid, ps.fps, ps.fmt = rs.stream.pose, 0, 0, 200, rs.format.six_dof
    p_pose = tracking.add_pose_stream(ps)
    tracking.add_option(rs.option.enable_pose_jumping, rs.option_range(0, 1, 1, 1), True)
    recorder = rs.recorder(path, dev)
    queue = rs.frame_queue(100000)
    tracking.open(p_pose)
    tracking.start(queue)
    for i in range(frames):
        f = rs.software_pose_frame()
        d = rs.pose_frame_data() if hasattr(rs, 'pose_frame_data') else None
        pose = rs.pose()
        pose.translation = rs.vector()
        pose.translation.x, pose.translation.y, pose.translation.z = 0.01 * i, -0.02 * i, 0.5
        pose.rotation = rs.quaternion()
        pose.rotation.x, pose.rotation.y, pose.rotation.z, pose.rotation.w = 0.0, 0.0, 0.6, 0.8
        pose.velocity = rs.vector()
        pose.velocity.x, pose.velocity.y, pose.velocity.z = 2.0, -4.0, 0.0
        pose.acceleration = rs.vector()
        pose.acceleration.x, pose.acceleration.y, pose.acceleration.z = 0.1, 0.2, 0.3 + i
        pose.angular_velocity = rs.vector()
        pose.angular_velocity.x, pose.angular_velocity.y, pose.angular_velocity.z = 0.0, 0.0, 0.25
        pose.angular_acceleration = rs.vector()
        pose.angular_acceleration.x, pose.angular_acceleration.y, pose.angular_acceleration.z = 0.0, 0.5, 0.0
        pose.tracker_confidence, pose.mapper_confidence = 3, 1 + i % 3
        f.data = pose
        f.timestamp, f.domain, f.frame_number = T0 + i * 5.0, rs.timestamp_domain.hardware_clock, i + 1
        f.profile = p_pose.as_pose_stream_profile() if hasattr(p_pose, 'as_pose_stream_profile') else p_pose
        tracking.on_pose_frame(f)
        time.sleep(0.005)
    time.sleep(0.5)
    tracking.stop()
    tracking.close()
    del recorder


FORMATS = [('bgr8', 3), ('rgba8', 4), ('bgra8', 4), ('y16', 2), ('yuyv', 2), ('uyvy', 2), ('raw16', 2)]


def record_formats(path, frames):
    """Video formats stored differently in the .db3 layout (PNG with swapped channels, 16-bit
    PNG, zstd): one sensor and one color stream per format, each frame's pixels known."""
    dev = rs.software_device()
    dev.register_info(rs.camera_info.name, 'rosbag2-rs formats camera')
    dev.register_info(rs.camera_info.serial_number, '4242')
    streams = []
    for k, (name, bpp) in enumerate(FORMATS):
        s = dev.add_sensor(f'Sensor {name}')
        profile = video_profile(s, rs.stream.color, k, k, getattr(rs.format, name), bpp, 40.0 + k)
        streams.append((s, profile, bpp))
    recorder = rs.recorder(path, dev)
    queue = rs.frame_queue(10000)
    for s, profile, _ in streams:
        s.open(profile)
        s.start(queue)
    keep = []
    for i in range(frames):
        t = T0 + i * 1000.0 / 30
        for k, (s, profile, bpp) in enumerate(streams):
            pixels = bytes((i * 11 + j * 3 + k) % 253 for j in range(W * H * bpp))
            keep.append(pixels)
            f = rs.software_video_frame()
            f.pixels, f.stride, f.bpp = pixels, W * bpp, bpp
            f.timestamp, f.domain, f.frame_number = t, rs.timestamp_domain.hardware_clock, i + 1
            f.profile = profile.as_video_stream_profile()
            s.on_video_frame(f)
        time.sleep(0.01)
    time.sleep(0.5)
    for s, _, _ in streams:
        s.stop()
        s.close()
    del recorder


def pipeline(path):
    """Plays PATH the way applications open recordings: a pipeline on a config with
    `enable_device_from_file`, non-real time, until the file ends."""
    cfg = rs.config()
    cfg.enable_device_from_file(path, repeat_playback=False)
    pipe = rs.pipeline()
    profile = pipe.start(cfg)
    profile.get_device().as_playback().set_real_time(False)
    framesets, streams = 0, set()
    while True:
        ok, fs = pipe.try_wait_for_frames(2000)
        if not ok:
            break
        framesets += 1
        streams |= {f'{ename(f.get_profile().stream_type())}_{f.get_profile().stream_index()}' for f in fs}
    pipe.stop()
    print(json.dumps({'framesets': framesets, 'streams': sorted(streams)}))


def ename(e):
    """An SDK enum's name (`.name` is shadowed: `rs.camera_info.name` is a member)."""
    return str(e).split('.')[-1]


def record_hd(path, frames):
    import numpy as np
    global W, H
    W, H = 1280, 720
    dev = rs.software_device()
    dev.register_info(rs.camera_info.name, 'rosbag2-rs benchmark camera')
    depth = dev.add_sensor('Stereo Module')
    color = dev.add_sensor('RGB Camera')
    p_depth = video_profile(depth, rs.stream.depth, 0, 0, rs.format.z16, 2, 640.0)
    p_color = video_profile(color, rs.stream.color, 0, 1, rs.format.rgb8, 3, 900.0)
    recorder = rs.recorder(path, dev)
    queue = rs.frame_queue(10000)
    depth.open(p_depth)
    color.open(p_color)
    depth.start(queue)
    color.start(queue)
    rng = np.random.default_rng(7)  # camera-like: pixels that do not compress
    keep = []
    for i in range(frames):
        for sensor, profile, bpp in ((depth, p_depth, 2), (color, p_color, 3)):
            pixels = rng.integers(0, 256, W * H * bpp, dtype=np.uint8).tobytes()
            keep.append(pixels)
            f = rs.software_video_frame()
            f.pixels, f.stride, f.bpp = pixels, W * bpp, bpp
            f.timestamp, f.domain, f.frame_number = T0 + i * 1000.0 / 30, rs.timestamp_domain.hardware_clock, i + 1
            f.profile = profile.as_video_stream_profile()
            sensor.on_video_frame(f)
        time.sleep(0.02)
    time.sleep(0.5)
    for s in (depth, color):
        s.stop()
        s.close()
    del recorder


def play_speed(path):
    ctx = rs.context()
    dev = ctx.load_device(path)
    playback = dev.as_playback()
    playback.set_real_time(False)
    count = [0, 0]

    def on_frame(f):
        count[0] += 1
        count[1] += f.get_data_size()

    sensors = dev.query_sensors()
    start = time.perf_counter()
    for s in sensors:
        s.open(s.get_stream_profiles())
        s.start(on_frame)
    while playback.current_status() != rs.playback_status.stopped or count[0] == 0:
        time.sleep(0.001)
        if time.perf_counter() - start > 300:
            break
    seconds = time.perf_counter() - start
    for s in sensors:
        s.stop()
        s.close()
    print(seconds, count[0], count[1])


def profile_info(p):
    out = {'stream': ename(p.stream_type()), 'index': p.stream_index(), 'format': ename(p.format()), 'fps': p.fps(),
           'unique_id': p.unique_id()}
    if p.is_video_stream_profile():
        v = p.as_video_stream_profile()
        i = v.get_intrinsics()
        out.update(width=v.width(), height=v.height(),
                   intrinsics={'ppx': i.ppx, 'ppy': i.ppy, 'fx': i.fx, 'fy': i.fy, 'model': ename(i.model),
                               'coeffs': list(i.coeffs)})
    if p.is_motion_stream_profile():
        i = p.as_motion_stream_profile().get_motion_intrinsics()
        out['motion_intrinsics'] = {'data': [list(r) for r in i.data], 'noise_variances': list(i.noise_variances),
                                    'bias_variances': list(i.bias_variances)}
    return out


def dump(path):
    ctx = rs.context()
    dev = ctx.load_device(path)
    playback = dev.as_playback()
    playback.set_real_time(False)
    info = {ename(k): dev.get_info(k) for k in rs.camera_info.__members__.values() if dev.supports(k)}
    sensors, frames, profiles = [], [], []
    for s in dev.query_sensors():
        ps = s.get_stream_profiles()
        profiles += ps
        options = {}
        for o in s.get_supported_options():
            options[ename(o)] = {'value': s.get_option(o), 'description': s.get_option_description(o)}
        sensors.append({'name': s.get_info(rs.camera_info.name), 'options': options,
                        'profiles': [profile_info(p) for p in ps]})
    extrinsics = []
    for a in profiles:
        for b in profiles:
            if a.unique_id() < b.unique_id():
                try:
                    e = a.get_extrinsics_to(b)
                except RuntimeError:
                    continue
                extrinsics.append({'from': [ename(a.stream_type()), a.stream_index()],
                                   'to': [ename(b.stream_type()), b.stream_index()],
                                   'rotation': list(e.rotation), 'translation': list(e.translation)})

    def on_frame(f):
        p = f.get_profile()
        item = {'stream': ename(p.stream_type()), 'index': p.stream_index(), 'format': ename(p.format()),
                'number': f.get_frame_number(), 'timestamp': f.get_timestamp(),
                'domain': ename(f.get_frame_timestamp_domain()),
                'metadata': {ename(m): f.get_frame_metadata(m) for m in rs.frame_metadata_value.__members__.values()
                             if f.supports_frame_metadata(m)}}
        if f.is_video_frame():
            v = f.as_video_frame()
            item.update(width=v.get_width(), height=v.get_height(), stride=v.get_stride_in_bytes(),
                        crc32=zlib.crc32(bytes(v.get_data())))
        elif f.is_motion_frame():
            d = f.as_motion_frame().get_motion_data()
            item['xyz'] = [d.x, d.y, d.z]
        elif f.is_pose_frame():
            d = f.as_pose_frame().get_pose_data()
            v = lambda x: [x.x, x.y, x.z]  # noqa: E731
            item['pose'] = {'translation': v(d.translation), 'velocity': v(d.velocity),
                            'acceleration': v(d.acceleration), 'angular_velocity': v(d.angular_velocity),
                            'angular_acceleration': v(d.angular_acceleration),
                            'rotation': [d.rotation.x, d.rotation.y, d.rotation.z, d.rotation.w],
                            'tracker_confidence': d.tracker_confidence, 'mapper_confidence': d.mapper_confidence}
        frames.append(item)

    notifications = []

    def on_notification(n):
        notifications.append({'category': ename(n.get_category()), 'description': n.get_description(),
                              'severity': ename(n.get_severity()), 'serialized_data': str(n.serialized_data)})

    sensor_objects = dev.query_sensors()
    # Playback starts with the first sensor: paused until all are started, else the frames of
    # the sensors started later are dropped.
    playback.pause()
    # A sensor whose streams were all left out of a copy has none to open.
    streaming = [s for s in sensor_objects if s.get_stream_profiles()]
    for s in streaming:
        s.set_notifications_callback(on_notification)
        s.open(s.get_stream_profiles())
        s.start(on_frame)
    playback.resume()
    # Wait for playback to start, then to end and its last frames to come out of the sensors'
    # queues (the status turns to stopped when the reader reaches the end, before the callbacks
    # of the frames still queued have run): stopped and 0.5 s without a frame, or a 3 s stall.
    deadline, last, quiet = time.time() + 120, -1, 0
    while time.time() < deadline:
        time.sleep(0.05)
        if len(frames) == last:
            quiet += 1
        else:
            last, quiet = len(frames), 0
        if (frames and playback.current_status() == rs.playback_status.stopped and quiet >= 10) or quiet > 60:
            break
    # The options as playback left them: the recorded changes applied.
    for sensor, s in zip(sensors, sensor_objects):
        sensor['options_end'] = {ename(o): s.get_option(o) for o in s.get_supported_options()}
    for s in streaming:
        s.stop()
        s.close()
    print(json.dumps({'notifications': notifications, 'info': info, 'duration_ns': playback.get_duration().total_seconds() * 1e9 if hasattr(
        playback.get_duration(), 'total_seconds') else None, 'sensors': sensors, 'extrinsics': extrinsics,
        'frames': frames}))


if __name__ == '__main__':
    if sys.argv[1] == 'record':
        record(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 30)
    elif sys.argv[1] == 'record-full':
        record_full(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 30)
    elif sys.argv[1] == 'record-pose':
        record_pose(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 40)
    elif sys.argv[1] == 'record-formats':
        record_formats(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 10)
    elif sys.argv[1] == 'pipeline':
        pipeline(sys.argv[2])
    elif sys.argv[1] == 'record-hd':
        record_hd(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == 'play-speed':
        play_speed(sys.argv[2])
    else:
        dump(sys.argv[2])
