"""rosbag2's compressed bags (`--compression-mode file|message`, `--compression-format zstd`) in
both directions, MCAP and SQLite3, made here without ROS 2.

Python builds rosbag2's layouts from `rosbags` bags, following `rosbag2_compression`: in file mode
each closed storage file is streamed through zstd into `<file>.zstd` and removed, and
`metadata.yaml` lists the `.zstd` names in `relative_file_paths` (`files[].path` keeps the
uncompressed names) with `compression_format: zstd`, `compression_mode: FILE`; in message mode
each message's data is one zstd frame (level 1, content size in the header) and the metadata says
`compression_mode: MESSAGE`. We read those (`ros2bag-rs cat`/`info`) byte for byte. We write
compressed bags (the storage crate's writer, driven by the tools crate's `examples/compress_bag`) and Python reads
them back with `zstandard` and then `rosbags`/`mcap`, byte for byte."""
import shutil
import sqlite3
import subprocess

import pytest
import zstandard
from conftest import TARGET
from mcap.reader import make_reader
from rosbags.rosbag2 import Reader, StoragePlugin
from ruamel.yaml import YAML
from test_storage_interop import sample_messages, write_with_rosbags

COMPRESS_BAG = TARGET / 'debug' / 'examples' / 'compress_bag'
PLUGINS = {'mcap': StoragePlugin.MCAP, 'sqlite3': StoragePlugin.SQLITE3}
EXT = {'mcap': '.mcap', 'sqlite3': '.db3'}


def yaml():
    y = YAML(typ='safe')
    y.default_flow_style = False
    return y


def read_metadata(bag):
    return yaml().load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']


def write_metadata(bag, info):
    with (bag / 'metadata.yaml').open('w') as f:
        yaml().dump({'rosbag2_bagfile_information': info}, f)


def messages(typestore):
    """Compressible text, poses and incompressible random images."""
    return sample_messages(typestore, n=20, image_bytes=64 << 10)


def expected(msgs):
    return sorted(((topic, t, data) for topic, _, t, data in msgs), key=lambda r: r[1])


def rosbag2_bag(tmp_path, name, storage, mode, msgs, typestore):
    """A bag of two split files laid out as rosbag2 writes it with `--compression-mode mode`."""
    bag = tmp_path / name
    bag.mkdir()
    message_cctx = zstandard.ZstdCompressor(level=1)  # rosbag2's per-message compression
    halves = [msgs[:len(msgs) // 2], msgs[len(msgs) // 2:]]
    infos = []
    for i, half in enumerate(halves):
        part = tmp_path / f'{name}_part{i}'
        if mode == 'MESSAGE':
            half = [(topic, msgtype, t, message_cctx.compress(data)) for topic, msgtype, t, data in half]
        write_with_rosbags(part, PLUGINS[storage], typestore, half)
        info = read_metadata(part)
        [src] = info['relative_file_paths']
        target = f'{name}_{i}{EXT[storage]}'
        shutil.move(part / src, bag / target)
        info['files'][0]['path'] = target
        info['relative_file_paths'] = [target]
        infos.append(info)
        shutil.rmtree(part)
    info = infos[0]
    info['relative_file_paths'] = [p for i in infos for p in i['relative_file_paths']]
    info['files'] = [f for i in infos for f in i['files']]
    info['message_count'] = sum(i['message_count'] for i in infos)
    counts = {}
    for i in infos:
        for t in i['topics_with_message_count']:
            counts[t['topic_metadata']['name']] = counts.get(t['topic_metadata']['name'], 0) + t['message_count']
    topics = {t['topic_metadata']['name']: t for i in infos for t in i['topics_with_message_count']}
    info['topics_with_message_count'] = [dict(t, message_count=counts[n]) for n, t in topics.items()]
    start = min(i['starting_time']['nanoseconds_since_epoch'] for i in infos)
    end = max(i['starting_time']['nanoseconds_since_epoch'] + i['duration']['nanoseconds'] for i in infos)
    info['starting_time'] = {'nanoseconds_since_epoch': start}
    info['duration'] = {'nanoseconds': end - start}
    info['compression_format'] = 'zstd'
    info['compression_mode'] = mode
    if mode == 'FILE':
        # rosbag2's ZstdCompressor::compress_uri: one streamed frame per file, then the original
        # is removed and only relative_file_paths is renamed.
        file_cctx = zstandard.ZstdCompressor(level=3)
        for k, relative in enumerate(info['relative_file_paths']):
            with (bag / relative).open('rb') as src, (bag / f'{relative}.zstd').open('wb') as dst:
                file_cctx.copy_stream(src, dst)
            (bag / relative).unlink()
            info['relative_file_paths'][k] = f'{relative}.zstd'
    info['bag_size'] = sum((bag / p).stat().st_size for p in info['relative_file_paths'])
    write_metadata(bag, info)
    return bag


@pytest.mark.parametrize('mode', ['FILE', 'MESSAGE'])
@pytest.mark.parametrize('storage', ['mcap', 'sqlite3'])
def test_we_read_rosbag2_compressed_bags_byte_for_byte(tmp_path, cli, typestore, storage, mode):
    msgs = messages(typestore)
    bag = rosbag2_bag(tmp_path, 'theirs', storage, mode, msgs, typestore)
    before = sorted(p.name for p in bag.iterdir())
    # The layout is a valid compressed bag for another reader too.
    with Reader(bag) as reader:
        assert sorted(((c.topic, t, bytes(d)) for c, t, d in reader.messages()), key=lambda r: r[1]) == expected(msgs)
    ours = cli.cat(bag)
    assert [(m['topic'], m['recv'], bytes.fromhex(m['data'])) for m in ours] == expected(msgs)
    info = cli.info(bag)
    assert info['message_count'] == len(msgs)
    assert (info['compression_format'], info['compression_mode']) == ('zstd', mode)
    assert {t['name']: t['message_count'] for t in info['topics']}['/camera/image'] == 2
    # Nothing was decompressed into the bag directory.
    assert sorted(p.name for p in bag.iterdir()) == before
    # convert reads it too, and writes it uncompressed.
    plain = tmp_path / 'plain'
    cli.run('convert', bag, '-o', plain)
    assert [(m['topic'], m['recv'], bytes.fromhex(m['data'])) for m in cli.cat(plain)] == expected(msgs)


def test_unknown_compression_format_is_a_clear_error(tmp_path, cli, typestore):
    bag = rosbag2_bag(tmp_path, 'theirs', 'mcap', 'FILE', messages(typestore), typestore)
    info = read_metadata(bag)
    info['compression_format'] = 'lz77'
    write_metadata(bag, info)
    proc = cli.run('info', bag, check=False)
    assert proc.returncode != 0
    assert 'metadata.yaml' in proc.stderr and "'lz77'" in proc.stderr, proc.stderr


def test_corrupted_compressed_file_is_a_clear_error(tmp_path, cli, typestore):
    bag = rosbag2_bag(tmp_path, 'theirs', 'mcap', 'FILE', messages(typestore), typestore)
    path = bag / read_metadata(bag)['relative_file_paths'][1]
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])
    proc = cli.run('cat', '--format', 'hex', bag, check=False)
    assert proc.returncode != 0
    assert path.name in proc.stderr, proc.stderr


def compress_with_us(source, out, storage, mode):
    if not COMPRESS_BAG.exists():
        pytest.fail(f'{COMPRESS_BAG} missing: `cargo build -p rosbag2_rs_tools --examples`')
    subprocess.run([str(COMPRESS_BAG), str(source), str(out), '--storage', storage, '--mode', mode,
                    '--threads', '2', '--max-bag-size', '60000'], check=True, capture_output=True, text=True)


def decompressed_copy(bag, tmp_path):
    """The bag with every file (and every SQLite3 message) decompressed by `zstandard`, as a plain
    rosbag2 bag (MCAP messages are decompressed as they are read: see `mcap_messages`)."""
    info = read_metadata(bag)
    plain = tmp_path / f'{bag.name}_plain'
    plain.mkdir()
    dctx = zstandard.ZstdDecompressor()
    for k, relative in enumerate(info['relative_file_paths']):
        if info['compression_mode'] == 'FILE':
            assert relative.endswith('.zstd')
            name = relative.removesuffix('.zstd')
            with (bag / relative).open('rb') as src, (plain / name).open('wb') as dst:
                dctx.copy_stream(src, dst)
        else:
            name = relative
            shutil.copy(bag / relative, plain / name)
            if name.endswith('.db3'):
                db = sqlite3.connect(plain / name)
                rows = db.execute('SELECT id, data FROM messages').fetchall()
                db.executemany('UPDATE messages SET data = ? WHERE id = ?',
                               [(dctx.decompress(data), i) for i, data in rows])
                db.commit()
                db.close()
        info['relative_file_paths'][k] = name
    info['compression_format'] = ''
    info['compression_mode'] = ''
    write_metadata(plain, info)
    return plain


def mcap_messages(paths, decompress):
    dctx = zstandard.ZstdDecompressor()
    rows = []
    for path in paths:
        with open(path, 'rb') as f:
            for _, channel, message in make_reader(f).iter_messages(log_time_order=True):
                data = dctx.decompress(message.data) if decompress else message.data
                rows.append((channel.topic, message.log_time, data))
    return sorted(rows, key=lambda r: r[1])


@pytest.mark.parametrize('mode', ['file', 'message'])
@pytest.mark.parametrize('storage', ['mcap', 'sqlite3'])
def test_python_reads_our_compressed_bags_byte_for_byte(tmp_path, typestore, storage, mode):
    msgs = messages(typestore)
    source = tmp_path / 'source'
    write_with_rosbags(source, StoragePlugin.MCAP, typestore, msgs)
    ours = tmp_path / 'ours'
    compress_with_us(source, ours, storage, mode)
    info = read_metadata(ours)
    text = (ours / 'metadata.yaml').read_text()
    assert '  compression_format: zstd\n' in text and f'  compression_mode: {mode.upper()}\n' in text, text
    assert len(info['relative_file_paths']) > 1
    assert sorted(p.name for p in ours.iterdir()) == sorted(info['relative_file_paths'] + ['metadata.yaml'])
    for relative, file in zip(info['relative_file_paths'], info['files']):
        if mode == 'file':
            assert relative == file['path'] + '.zstd'
            with (ours / relative).open('rb') as f:
                assert f.read(4) == b'\x28\xb5\x2f\xfd'
        else:
            assert relative == file['path'] and relative.endswith(EXT[storage])
    # rosbags reads rosbag2's compressed bags itself.
    with Reader(ours) as reader:
        assert sorted(((c.topic, t, bytes(d)) for c, t, d in reader.messages()), key=lambda r: r[1]) == expected(msgs)
    # zstandard, then plain readers.
    if storage == 'mcap':
        if mode == 'file':
            plain = decompressed_copy(ours, tmp_path)
            paths = [plain / p for p in read_metadata(plain)['relative_file_paths']]
            assert mcap_messages(paths, decompress=False) == expected(msgs)
        else:
            assert mcap_messages([ours / p for p in info['relative_file_paths']], decompress=True) == expected(msgs)
    else:
        plain = decompressed_copy(ours, tmp_path)
        with Reader(plain) as reader:
            rows = sorted(((c.topic, t, bytes(d)) for c, t, d in reader.messages()), key=lambda r: r[1])
        assert rows == expected(msgs)
