"""Damage that hides only itself (issue 26), checked with Python `rosbags` and `mcap` as the peer
readers: a chunk with a bad CRC is skipped by `cat` and left out by `reindex`; an empty split
file, a missing file and a leftover uncompressed file of a file-mode bag leave metadata that
`rosbags` reads."""
import shutil

import pytest
import zstandard
from mcap.reader import make_reader
from rosbags.rosbag2 import StoragePlugin
from test_compression_interop import expected, messages, read_metadata, rosbag2_bag, write_metadata
from test_storage_interop import read_with_rosbags, sample_messages, write_with_rosbags


def chunk_indexes(path):
    with path.open('rb') as f:
        return make_reader(f).get_summary().chunk_indexes


def test_a_chunk_with_a_bad_crc_is_skipped_and_reindex_leaves_it_out(tmp_path, cli, typestore):
    msgs = sample_messages(typestore, n=100, image_bytes=256 << 10)
    source = tmp_path / 'source'
    write_with_rosbags(source, StoragePlugin.MCAP, typestore, msgs)
    bag = tmp_path / 'ours'
    cli.run('convert', source, '-o', bag, '--storage-preset-profile', 'none')
    [path] = bag.glob('*.mcap')
    chunks = chunk_indexes(path)
    assert len(chunks) >= 3
    damaged = chunks[len(chunks) // 2]
    data = bytearray(path.read_bytes())
    data[damaged.chunk_start_offset + damaged.chunk_length - 20] ^= 0x5A
    path.write_bytes(bytes(data))
    lost = [m for m in expected(msgs) if damaged.message_start_time <= m[1] <= damaged.message_end_time]
    kept = [m for m in expected(msgs) if m not in lost]
    assert lost and kept

    proc = cli.run('cat', '--format', 'hex', bag)
    assert f'chunk at offset {damaged.chunk_start_offset}' in proc.stderr, proc.stderr
    assert f'{len(lost)} messages' in proc.stderr and 'reindex' in proc.stderr, proc.stderr
    assert proc.stdout.count('\n') == len(kept)

    report = cli.run('reindex', bag).stdout
    assert 'repaired' in report and f'{len(lost)} messages' in report, report
    assert f'chunk at offset {damaged.chunk_start_offset}' in report, report
    rows, _, _ = read_with_rosbags(bag, typestore)
    assert rows == kept
    assert 'intact' in cli.run('reindex', bag).stdout


@pytest.mark.parametrize('plugin', [StoragePlugin.MCAP, StoragePlugin.SQLITE3])
def test_reindex_leaves_an_empty_split_file_out(tmp_path, cli, typestore, plugin):
    msgs = sample_messages(typestore, n=20, image_bytes=1 << 10)
    bag = tmp_path / 'bag'
    write_with_rosbags(bag, plugin, typestore, msgs)
    [name] = read_metadata(bag)['relative_file_paths']
    ext = name[name.rindex('.'):]
    # The recorder had just opened the next split file when the power went.
    (bag / f'bag_1{ext}').write_bytes(b'')
    (bag / 'metadata.yaml').unlink()
    report = cli.run('reindex', bag).stdout
    assert f'bag_1{ext}' in report and 'unreadable' in report and 'left out' in report, report
    assert read_metadata(bag)['relative_file_paths'] == [name]
    rows, _, _ = read_with_rosbags(bag, typestore)
    assert rows == expected(msgs)


def test_a_missing_file_costs_only_itself_and_reindex_fixes_the_metadata(tmp_path, cli, typestore):
    msgs = messages(typestore)
    bag = rosbag2_bag(tmp_path, 'split', 'mcap', 'NONE', msgs, typestore)
    info = read_metadata(bag)
    info['compression_format'] = info['compression_mode'] = ''
    write_metadata(bag, info)
    first, second = info['relative_file_paths']
    (bag / first).unlink()
    proc = cli.run('cat', '--format', 'hex', bag)
    assert first in proc.stderr and 'reindex' in proc.stderr, proc.stderr
    rest = [m for m in expected(msgs) if m in expected(msgs[len(msgs) // 2:])]
    assert proc.stdout.count('\n') == len(rest)
    cli.run('reindex', bag)
    assert read_metadata(bag)['relative_file_paths'] == [second]
    rows, _, _ = read_with_rosbags(bag, typestore)
    assert rows == rest


def test_reindex_compresses_the_file_a_killed_file_mode_recorder_left(tmp_path, cli, typestore):
    msgs = messages(typestore)
    bag = rosbag2_bag(tmp_path, 'filemode', 'mcap', 'FILE', msgs, typestore)
    first, last = read_metadata(bag)['relative_file_paths']
    # Killed while writing the last file: it was never compressed, and has no summary.
    plain = bag / last.removesuffix('.zstd')
    with (bag / last).open('rb') as f:
        data = zstandard.ZstdDecompressor().stream_reader(f).read()
    plain.write_bytes(data[: len(data) * 3 // 4])
    (bag / last).unlink()
    (bag / 'metadata.yaml').unlink()
    cli.run('reindex', bag)
    info = read_metadata(bag)
    assert info['compression_mode'] == 'FILE'
    assert info['relative_file_paths'] == [first, last]
    assert not plain.exists()
    rows, _, _ = read_with_rosbags(bag, typestore)
    assert len(msgs) // 2 < len(rows) < len(msgs)
    assert rows == expected(msgs)[: len(rows)]
    shutil.rmtree(bag)
