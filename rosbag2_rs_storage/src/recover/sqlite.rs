//! SQLite3 recovery.
//!
//! A `.db3` a killed writer left comes in two states:
//!
//! - **With a hot write-ahead log** (`-wal` beside it, preset `resilient`): every committed
//!   transaction is in the log. SQLite replays it when the database is opened read-write, so
//!   [`apply_wal`] opens it and checkpoints the log into the database file. Uncommitted frames
//!   are ignored by SQLite, as they must be: the unit of durability is the transaction.
//! - **Damaged or truncated** (killed mid-transaction without a journal on disk, or cut short, so
//!   that the header's page count runs past the file): SQLite stops with "database disk image is
//!   malformed" at the first missing page. [`salvage`] then reads the file page by page itself:
//!   it walks the `messages` table's b-tree from its root and also scans every page for table
//!   leaves the tree no longer reaches, decodes every cell of every whole page (following
//!   overflow chains, which must be whole too) and keeps the rows shaped like rosbag2 messages
//!   `(id, topic_id, timestamp, data)`. A page is the unit SQLite writes, so a page cut by the
//!   end of the file is not read (its tail may be stale). The small tables (`schema`,
//!   `metadata`, `topics`, `message_definitions`) sit at the start of the file and are copied
//!   row by row through SQLite, stopping at the first unreadable row. A fresh database is
//!   written with the original `CREATE` statements and replaces the damaged one only when
//!   complete. Messages whose topic is not among the recovered topics are left out and
//!   counted as lost.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags};

use super::{FileRecovery, RecoveryAction};
use crate::error::{Result, StorageError};
use crate::formats::StorageId;
use crate::limits;

fn sql_err(path: &Path) -> impl Fn(rusqlite::Error) -> StorageError + '_ {
    move |source| StorageError::Sqlite {
        path: path.to_path_buf(),
        source,
    }
}

/// The `-wal` file beside a database.
pub fn wal_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push("-wal");
    PathBuf::from(name)
}

fn shm_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push("-shm");
    PathBuf::from(name)
}

/// Applies a hot write-ahead log to the database: opens it read-write (SQLite replays every
/// committed transaction of the log) and checkpoints the log into the database file. Returns
/// false when there is no log.
pub fn apply_wal(db: &Path) -> Result<bool> {
    let wal = wal_path(db);
    if !wal.is_file() {
        return Ok(false);
    }
    let conn = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sql_err(db))?;
    let (busy, frames, done): (i64, i64, i64) = conn
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .map_err(sql_err(db))?;
    log::info!(
        "{}: write-ahead log applied ({done} of {frames} frames checkpointed, busy {busy})",
        db.display()
    );
    conn.close().map_err(|(_, e)| sql_err(db)(e))?;
    Ok(true)
}

/// Statistics of an SQLite bag read by SQLite itself; an error when SQLite cannot read it whole.
fn check(db: &Path) -> Result<FileRecovery> {
    let conn = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sql_err(db))?;
    let verdict: String = conn
        .query_row("PRAGMA quick_check(1)", [], |r| r.get(0))
        .map_err(sql_err(db))?;
    if verdict != "ok" {
        return Err(StorageError::corrupt(db, format!("quick_check: {verdict}")));
    }
    let (count, bytes, first, last): (i64, Option<i64>, Option<i64>, Option<i64>) = conn
        .query_row(
            &format!(
                "SELECT count(*), sum(length(data)), min(timestamp), max(timestamp) FROM messages \
                 WHERE {WELL_FORMED}"
            ),
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .map_err(sql_err(db))?;
    let mut report = FileRecovery::intact(db.to_path_buf(), StorageId::Sqlite3);
    report.messages = count as u64;
    report.message_bytes = bytes.unwrap_or(0) as u64;
    report.time_range = first.zip(last);
    Ok(report)
}

/// What a message row needs to be read: an integer timestamp and topic id, and data (a blob, or
/// null for an empty message).
const WELL_FORMED: &str = "typeof(timestamp) = 'integer' AND typeof(topic_id) = 'integer' \
     AND typeof(data) IN ('blob', 'null')";

/// Deletes the message rows readers skip (see [`WELL_FORMED`]) from an otherwise readable
/// database, and accounts for them in `report`. A database without such rows is not opened for
/// writing.
fn remove_malformed_rows(db: &Path, report: &mut FileRecovery) -> Result<()> {
    let malformed: i64 = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .and_then(|conn| {
        conn.query_row(
            &format!("SELECT count(*) FROM messages WHERE NOT ({WELL_FORMED})"),
            [],
            |r| r.get(0),
        )
    })
    .map_err(sql_err(db))?;
    if malformed == 0 {
        return Ok(());
    }
    let conn = Connection::open(db).map_err(sql_err(db))?;
    let removed = conn
        .execute(
            &format!("DELETE FROM messages WHERE NOT ({WELL_FORMED})"),
            [],
        )
        .map_err(sql_err(db))? as u64;
    if removed > 0 {
        report.action = RecoveryAction::Rewritten;
        report.lost.messages = Some(removed);
        report.notes.push(format!(
            "{removed} malformed message rows (a timestamp, topic id or data of the wrong type) removed"
        ));
        log::warn!("{}: {removed} malformed message rows removed", db.display());
    }
    Ok(())
}

/// Recovers one `.db3`: applies a hot write-ahead log, and when SQLite still cannot read the
/// database whole, salvages every intact row into a fresh database that replaces it.
pub fn recover(db: &Path) -> Result<FileRecovery> {
    let mut notes = Vec::new();
    let wal_applied = match apply_wal(db) {
        Ok(applied) => applied,
        Err(e) => {
            notes.push(format!("the write-ahead log could not be applied: {e}"));
            false
        }
    };
    if let Ok(mut report) = check(db) {
        if wal_applied {
            report.action = RecoveryAction::WalApplied;
        }
        report.notes = notes;
        remove_malformed_rows(db, &mut report)?;
        return Ok(report);
    }
    // Frames of a log that could not be applied would be replayed onto the rebuilt database:
    // set the log aside.
    for side in [wal_path(db), shm_path(db)] {
        if side.exists() {
            let mut aside = side.as_os_str().to_owned();
            aside.push(".unapplied");
            std::fs::rename(&side, &aside).map_err(|e| StorageError::io(&side, e))?;
            notes.push(format!(
                "{} could not be applied; kept as {}",
                side.display(),
                PathBuf::from(aside).display()
            ));
        }
    }
    let mut report = salvage(db)?;
    report.notes.splice(0..0, notes);
    Ok(report)
}

/// A table or index of the damaged database, from `sqlite_master`.
struct SchemaEntry {
    kind: String,
    name: String,
    rootpage: i64,
    sql: String,
}

/// Rebuilds `db` from its intact rows (see the module documentation).
pub fn salvage(db: &Path) -> Result<FileRecovery> {
    let bytes = std::fs::read(db).map_err(|e| StorageError::io(db, e))?;
    let file = DbFile::parse(&bytes).map_err(|e| StorageError::corrupt(db, e.to_string()))?;
    let old = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sql_err(db))?;
    // SQLite refuses a database whose header counts more pages than the file holds unless the
    // schema is "writable"; nothing is written through this read-only connection.
    old.execute_batch("PRAGMA writable_schema=ON")
        .map_err(sql_err(db))?;
    let schema: Vec<SchemaEntry> = old
        .prepare("SELECT type, name, rootpage, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")
        .and_then(|mut s| {
            s.query_map([], |r| {
                Ok(SchemaEntry {
                    kind: r.get(0)?,
                    name: r.get(1)?,
                    rootpage: r.get(2)?,
                    sql: r.get(3)?,
                })
            })?
            .collect()
        })
        .map_err(sql_err(db))?;
    let messages_root = schema
        .iter()
        .find(|e| e.kind == "table" && e.name == "messages")
        .map(|e| e.rootpage)
        .ok_or_else(|| StorageError::corrupt(db, "no 'messages' table to salvage"))?;

    let tmp = db.with_extension("db3.repair");
    let _ = std::fs::remove_file(&tmp);
    let new = Connection::open(&tmp).map_err(sql_err(&tmp))?;
    new.execute_batch("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN")
        .map_err(sql_err(&tmp))?;
    let mut report = FileRecovery::intact(db.to_path_buf(), StorageId::Sqlite3);
    report.action = RecoveryAction::Rewritten;
    for entry in schema.iter().filter(|e| e.kind == "table") {
        if entry.name.starts_with("sqlite_") {
            continue;
        }
        new.execute_batch(&entry.sql).map_err(sql_err(&tmp))?;
        if entry.name != "messages" {
            let (copied, error) = copy_table(&old, &new, &entry.name);
            if let Some(e) = error {
                report.notes.push(format!(
                    "table '{}': {copied} rows copied, then: {e}",
                    entry.name
                ));
            }
        }
    }
    let topics: HashSet<i64> = new
        .prepare("SELECT id FROM topics")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .unwrap_or_default();
    drop(old);

    let rows = file.messages(u32::try_from(messages_root).unwrap_or(0));
    let mut unknown_topic = 0u64;
    {
        let mut insert = new
            .prepare("INSERT INTO messages (id, topic_id, timestamp, data) VALUES (?1, ?2, ?3, ?4)")
            .map_err(sql_err(&tmp))?;
        for row in &rows.rows {
            if !topics.contains(&row.topic_id) {
                unknown_topic += 1;
                continue;
            }
            insert
                .execute((row.id, row.topic_id, row.timestamp, &row.data))
                .map_err(sql_err(&tmp))?;
            report.add_message(row.timestamp, row.data.len());
            if row.orphan {
                report.salvaged_messages += 1;
            }
        }
    }
    for entry in schema.iter().filter(|e| e.kind != "table") {
        if let Err(e) = new.execute_batch(&entry.sql) {
            report.notes.push(format!(
                "{} '{}' not recreated: {e}",
                entry.kind, entry.name
            ));
        }
    }
    new.execute_batch("COMMIT").map_err(sql_err(&tmp))?;
    new.close().map_err(|(_, e)| sql_err(&tmp)(e))?;
    std::fs::rename(&tmp, db).map_err(|e| StorageError::io(db, e))?;

    let lost = &mut report.lost;
    lost.damaged_bytes = rows.bad_pages * file.page_size as u64 + file.partial_page_bytes;
    lost.missing_bytes = file.missing_pages * file.page_size as u64;
    let dropped = rows.dropped + unknown_topic;
    let unknown = rows.unreachable_pages > 0
        || rows.bad_pages > 0
        || file.partial_page_bytes > 0
        || rows.over_budget.is_some();
    lost.messages = (!unknown).then_some(dropped);
    report.notes.push(format!(
        "rebuilt from its pages: {} rows from the table's b-tree, {} from pages it no longer reaches; \
         {} pages of the b-tree missing or unreadable, {} bad pages, {} rows dropped (overflow chain \
         broken), {unknown_topic} rows of unknown topics left out",
        rows.rows.len() as u64 - rows.orphans,
        rows.orphans,
        rows.unreachable_pages,
        rows.bad_pages,
        rows.dropped
    ));
    if let Some(over) = rows.over_budget {
        log::warn!("{}: {over}", db.display());
        report.notes.push(over.to_string());
    }
    log::warn!("{}: salvaged {} messages", db.display(), report.messages);
    Ok(report)
}

/// Copies the rows of `table` SQLite can read, in rowid order, stopping at the first error.
fn copy_table(old: &Connection, new: &Connection, table: &str) -> (u64, Option<rusqlite::Error>) {
    let mut copied = 0;
    let result = (|| -> rusqlite::Result<()> {
        let mut select = old.prepare(&format!("SELECT * FROM \"{table}\""))?;
        let columns = select.column_count();
        let placeholders = (1..=columns)
            .map(|i| format!("?{i}"))
            .collect::<Vec<_>>()
            .join(",");
        let mut insert =
            new.prepare(&format!("INSERT INTO \"{table}\" VALUES ({placeholders})"))?;
        let mut rows = select.query([])?;
        while let Some(row) = rows.next()? {
            let values = (0..columns)
                .map(|i| row.get::<_, Value>(i))
                .collect::<rusqlite::Result<Vec<_>>>()?;
            insert.execute(rusqlite::params_from_iter(values))?;
            copied += 1;
        }
        Ok(())
    })();
    (copied, result.err())
}

/// One row of the `messages` table read from the pages.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageRow {
    /// `id` (the rowid).
    pub id: i64,
    /// `topic_id`.
    pub topic_id: i64,
    /// `timestamp`, ns.
    pub timestamp: i64,
    /// `data`.
    pub data: Vec<u8>,
    /// True when the row's page is not reached from the table's root.
    pub orphan: bool,
}

/// Rows of the `messages` table found in a database file, with what could not be read.
#[derive(Debug, Default)]
pub struct SalvagedRows {
    /// The rows, by id.
    pub rows: Vec<MessageRow>,
    /// How many of them come from pages the table's b-tree does not reach.
    pub orphans: u64,
    /// Pages the b-tree points to that are missing or not b-tree pages.
    pub unreachable_pages: u64,
    /// Whole pages that claim to be table leaves but fail their checks.
    pub bad_pages: u64,
    /// Cells that could not be read whole (broken overflow chains, bad records).
    pub dropped: u64,
    /// Payload bytes copied out of the file.
    pub salvaged_bytes: u64,
    /// Set when the salvage stopped at its budget: the page and what its cell claimed.
    pub over_budget: Option<OverSalvageBudget>,
}

/// Cells whose payloads claim more bytes in all than the salvage of one file may copy out:
/// the file's length (the pages of a sound database hold each byte once), at most
/// [`limits::SALVAGE_BYTES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the cell at offset {offset} of page {page} claims {claimed} bytes, past the budget of {budget} bytes salvaged per file (the file's length, at most {}); salvage stopped there", limits::SALVAGE_BYTES.env)]
pub struct OverSalvageBudget {
    /// The page of the cell.
    pub page: u32,
    /// The cell's offset in its page.
    pub offset: usize,
    /// The payload size the cell claims.
    pub claimed: u64,
    /// The budget in force.
    pub budget: u64,
}

/// A database header that the page reader cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DbHeaderError {
    /// No `SQLite format 3` header (or fewer than its 100 bytes).
    #[error("not an SQLite 3 database (no header)")]
    NoHeader,
    /// A page size that is not a power of two from 512 to 65536.
    #[error("invalid page size {0}")]
    PageSize(usize),
    /// Reserved bytes per page that leave fewer than 480 usable.
    #[error("invalid reserved space ({0} bytes per page)")]
    ReservedSpace(usize),
}

/// A database file's pages.
pub(crate) struct DbFile<'a> {
    data: &'a [u8],
    /// Page size in bytes.
    pub page_size: usize,
    usable: usize,
    /// Whole pages in the file.
    pub pages: u32,
    /// Pages the header counts beyond the end of the file.
    pub missing_pages: u64,
    /// Bytes of a page cut by the end of the file.
    pub partial_page_bytes: u64,
    /// Overflow pages already read (each is read once: a chain that loops or that another
    /// cell already used breaks the cell).
    overflow_seen: std::cell::RefCell<HashSet<u32>>,
    /// Payload bytes copied out so far, and the budget.
    salvaged: std::cell::Cell<u64>,
    budget: u64,
    over_budget: std::cell::Cell<Option<OverSalvageBudget>>,
}

/// An SQLite varint at `at`: its value and length.
fn varint(b: &[u8], at: usize) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for i in 0..9 {
        let byte = *b.get(at + i)?;
        if i == 8 {
            return Some(((v << 8) | byte as u64, 9));
        }
        v = (v << 7) | (byte & 0x7f) as u64;
        if byte & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

fn be_u16(b: &[u8], at: usize) -> Option<usize> {
    Some(u16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?) as usize)
}

fn be_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// A column value of a record, as far as the messages table needs.
enum Column<'a> {
    Null,
    Int(i64),
    Blob(&'a [u8]),
    Other,
}

/// Decodes a record's columns; `None` when it is not well formed.
fn record(payload: &[u8]) -> Option<Vec<Column<'_>>> {
    let (header_len, mut at) = varint(payload, 0)?;
    let header_len = usize::try_from(header_len).ok()?;
    if header_len > payload.len() || header_len < at {
        return None;
    }
    let mut body = header_len;
    let mut out = Vec::new();
    while at < header_len {
        let (serial, n) = varint(payload, at)?;
        at += n;
        let (len, value) = match serial {
            0 => (0, Some(Column::Null)),
            1..=6 => {
                let len = [1, 2, 3, 4, 6, 8][serial as usize - 1];
                let bytes = payload.get(body..body + len)?;
                let mut v: i64 = if bytes[0] & 0x80 != 0 { -1 } else { 0 };
                for &b in bytes {
                    v = (v << 8) | b as i64;
                }
                (len, Some(Column::Int(v)))
            }
            7 => (8, None),
            8 => (0, Some(Column::Int(0))),
            9 => (0, Some(Column::Int(1))),
            10 | 11 => return None,
            n => ((n as usize - 12) / 2, None),
        };
        let end = body.checked_add(len).filter(|&e| e <= payload.len())?;
        out.push(match value {
            Some(v) => v,
            None if serial >= 12 && serial % 2 == 0 => Column::Blob(&payload[body..end]),
            None => Column::Other,
        });
        body = end;
    }
    (body == payload.len()).then_some(out)
}

/// The page size of the database whose first bytes (100 or more) are `head`.
fn page_size(head: &[u8]) -> std::result::Result<usize, DbHeaderError> {
    if !head.starts_with(b"SQLite format 3\0") || head.len() < 100 {
        return Err(DbHeaderError::NoHeader);
    }
    match be_u16(head, 16).unwrap_or(0) {
        1 => Ok(65536),
        n if n >= 512 && n.is_power_of_two() => Ok(n),
        n => Err(DbHeaderError::PageSize(n)),
    }
}

/// Pages the header (`head`, the first 100 bytes or more) of a database file of `file_len`
/// bytes counts beyond its whole pages: more than 0 for a truncated file. 0 when the header's
/// page count is not valid (written by an old SQLite).
pub(crate) fn missing_pages(head: &[u8], file_len: u64) -> std::result::Result<u64, DbHeaderError> {
    let page_size = page_size(head)? as u64;
    let counted = be_u32(head, 28).unwrap_or(0);
    Ok(match be_u32(head, 24) == be_u32(head, 92) {
        true => u64::from(counted).saturating_sub(file_len / page_size),
        false => 0,
    })
}

impl<'a> DbFile<'a> {
    /// Reads the database header.
    pub fn parse(data: &'a [u8]) -> std::result::Result<Self, DbHeaderError> {
        let page_size = page_size(data)?;
        let reserved = data[20] as usize;
        let usable = page_size
            .checked_sub(reserved)
            .filter(|&u| u >= 480)
            .ok_or(DbHeaderError::ReservedSpace(reserved))?;
        let pages = u32::try_from(data.len() / page_size).unwrap_or(u32::MAX);
        Ok(Self {
            data,
            page_size,
            usable,
            pages,
            missing_pages: missing_pages(data, data.len() as u64)?,
            partial_page_bytes: (data.len() % page_size) as u64,
            overflow_seen: Default::default(),
            salvaged: Default::default(),
            budget: (data.len() as u64).min(limits::SALVAGE_BYTES.get()),
            over_budget: Default::default(),
        })
    }

    /// Page `n` (1-based), when it is whole in the file.
    fn page(&self, n: u32) -> Option<&'a [u8]> {
        if n == 0 || n > self.pages {
            return None;
        }
        let start = (n as usize - 1) * self.page_size;
        self.data.get(start..start + self.page_size)
    }

    /// The b-tree header offset of page `n`.
    fn header_at(n: u32) -> usize {
        if n == 1 {
            100
        } else {
            0
        }
    }

    /// Cell offsets of a b-tree page of type `kind`, checked against the page's bounds; an
    /// offset the cell pointer array repeats is taken once.
    fn cells(&self, n: u32, kind: u8) -> Option<Vec<usize>> {
        let page = self.page(n)?;
        let h = Self::header_at(n);
        if *page.get(h)? != kind {
            return None;
        }
        let header_len = if kind == 0x05 || kind == 0x02 { 12 } else { 8 };
        let count = be_u16(page, h + 3)?;
        let array_end = h + header_len + 2 * count;
        if array_end > self.usable {
            return None;
        }
        let mut seen = HashSet::new();
        let mut out = Vec::with_capacity(count);
        for i in 0..count {
            let p = be_u16(page, h + header_len + 2 * i)
                .filter(|&p| p >= array_end && p < self.usable)?;
            if seen.insert(p) {
                out.push(p);
            }
        }
        Some(out)
    }

    /// Children of a table interior page (the right-most last).
    fn children(&self, n: u32) -> Option<Vec<u32>> {
        let page = self.page(n)?;
        let mut out = self
            .cells(n, 0x05)?
            .into_iter()
            .map(|p| be_u32(page, p))
            .collect::<Option<Vec<_>>>()?;
        out.push(be_u32(page, Self::header_at(n) + 8)?);
        Some(out)
    }

    /// The payload of a table leaf cell at `at` of page `n`, with its overflow pages (each
    /// read once in the whole file), within the file's salvage budget.
    fn leaf_cell(&self, n: u32, page: &[u8], at: usize) -> Option<(i64, Vec<u8>)> {
        let (size, a) = varint(page, at)?;
        let (rowid, b) = varint(page, at + a)?;
        // The payload (its local part and its overflow pages) cannot be larger than the file.
        let size = limits::check_len(size, 1, self.data.len()).ok()?;
        let spent = self.salvaged.get().saturating_add(size as u64);
        if spent > self.budget || self.over_budget.get().is_some() {
            if self.over_budget.get().is_none() {
                self.over_budget.set(Some(OverSalvageBudget {
                    page: n,
                    offset: at,
                    claimed: size as u64,
                    budget: self.budget,
                }));
            }
            return None;
        }
        self.salvaged.set(spent);
        let u = self.usable;
        let x = u - 35;
        let local = if size <= x {
            size
        } else {
            let m = ((u - 12) * 32 / 255) - 23;
            let k = m + ((size - m) % (u - 4));
            if k <= x {
                k
            } else {
                m
            }
        };
        let start = at + a + b;
        let end = start.checked_add(local).filter(|&e| e <= u)?;
        let mut payload = Vec::with_capacity(size);
        payload.extend_from_slice(page.get(start..end)?);
        if local < size {
            let mut next = be_u32(page, start + local)?;
            let mut hops = 0u32;
            while payload.len() < size {
                hops += 1;
                if hops > self.pages || !self.overflow_seen.borrow_mut().insert(next) {
                    return None;
                }
                let over = self.page(next)?;
                let take = (size - payload.len()).min(u - 4);
                payload.extend_from_slice(over.get(4..4 + take)?);
                next = be_u32(over, 0)?;
            }
        }
        Some((rowid as i64, payload))
    }

    /// The rows of a table leaf page shaped like `messages` rows; `None` when the page is not a
    /// table leaf. The count is of cells that could not be read.
    fn message_leaf(&self, n: u32, orphan: bool) -> Option<(Vec<MessageRow>, u64)> {
        let page = self.page(n)?;
        let cells = self.cells(n, 0x0D)?;
        let mut rows = Vec::new();
        let mut dropped = 0;
        for at in cells {
            let row = self.leaf_cell(n, page, at).and_then(|(rowid, payload)| {
                match record(&payload)?.as_slice() {
                    [Column::Null | Column::Int(_), Column::Int(topic_id), Column::Int(timestamp), Column::Blob(data)] => {
                        Some(MessageRow {
                            id: rowid,
                            topic_id: *topic_id,
                            timestamp: *timestamp,
                            data: data.to_vec(),
                            orphan,
                        })
                    }
                    _ => None,
                }
            });
            match row {
                Some(r) => rows.push(r),
                None => dropped += 1,
            }
        }
        Some((rows, dropped))
    }

    /// Every `messages` row on the whole pages of the file: the table's b-tree from `root`
    /// first, then table leaves it does not reach (see the module documentation).
    pub fn messages(&self, root: u32) -> SalvagedRows {
        let mut out = SalvagedRows::default();
        let mut by_id: HashMap<i64, usize> = HashMap::new();
        let mut seen: HashSet<u32> = HashSet::new();
        let mut stack = vec![root];
        let mut add = |out: &mut SalvagedRows, rows: Vec<MessageRow>, dropped: u64| {
            out.dropped += dropped;
            for row in rows {
                if by_id.contains_key(&row.id) {
                    continue;
                }
                by_id.insert(row.id, out.rows.len());
                out.orphans += u64::from(row.orphan);
                out.rows.push(row);
            }
        };
        while let Some(n) = stack.pop() {
            if !seen.insert(n) {
                continue;
            }
            if let Some(children) = self.children(n) {
                stack.extend(children.into_iter().rev());
            } else if let Some((rows, dropped)) = self.message_leaf(n, false) {
                add(&mut out, rows, dropped);
            } else {
                out.unreachable_pages += 1;
            }
        }
        for n in 2..=self.pages {
            if seen.contains(&n) {
                continue;
            }
            let Some(page) = self.page(n) else { continue };
            if page.first() != Some(&0x0D) {
                continue;
            }
            match self.message_leaf(n, true) {
                // A leaf of another table (topics, metadata, ...) has no message-shaped rows.
                Some((rows, _)) if !rows.is_empty() => add(&mut out, rows, 0),
                Some(_) => {}
                None => out.bad_pages += 1,
            }
        }
        out.rows.sort_by_key(|r| r.id);
        out.salvaged_bytes = self.salvaged.get();
        out.over_budget = self.over_budget.get();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_records() {
        assert_eq!(varint(&[0x05], 0), Some((5, 1)));
        assert_eq!(varint(&[0x81, 0x00], 0), Some((128, 2)));
        assert_eq!(varint(&[0xff; 9], 0), Some((u64::MAX, 9)));
        assert_eq!(varint(&[0x81], 0), None);
        // header 4 bytes: NULL, int8, int16, blob of 2
        let rec = [5, 0, 1, 2, 16, 7, 0x01, 0x00, 0xAA, 0xBB];
        let cols = record(&rec).unwrap();
        assert!(matches!(cols[1], Column::Int(7)));
        assert!(matches!(cols[2], Column::Int(256)));
        assert!(matches!(cols[3], Column::Blob(&[0xAA, 0xBB])));
        assert!(record(&rec[..9]).is_none());
        assert_eq!(
            DbFile::parse(b"SQLite format 3\0").err(),
            Some(DbHeaderError::NoHeader)
        );
    }

    /// A table leaf cell whose payload size varint says 2^64 - 1 bytes is a dropped cell, not a
    /// capacity-overflow panic (the size is checked against the file before anything is
    /// reserved).
    #[test]
    fn a_cell_claiming_a_huge_payload_is_dropped() {
        let mut data = vec![0u8; 2 * 512];
        data[..16].copy_from_slice(b"SQLite format 3\0");
        data[16..18].copy_from_slice(&512u16.to_be_bytes());
        let page = &mut data[512..];
        page[0] = 0x0D; // table leaf
        page[3..5].copy_from_slice(&1u16.to_be_bytes()); // one cell
        page[8..10].copy_from_slice(&100u16.to_be_bytes()); // at offset 100
        page[100..109].fill(0xff); // payload size: u64::MAX
        page[109] = 1; // rowid 1
        let db = DbFile::parse(&data).unwrap();
        let rows = db.messages(2);
        assert!(rows.rows.is_empty());
        assert_eq!(rows.dropped, 1);
    }

    /// A database of `pages` pages of `size` bytes: the header, then table leaf page 2 whose
    /// cell pointers are `cells`.
    fn db_with_leaf(size: usize, pages: usize, cells: &[u16]) -> Vec<u8> {
        let mut data = vec![0u8; pages * size];
        data[..16].copy_from_slice(b"SQLite format 3\0");
        data[16..18].copy_from_slice(&(size as u16).to_be_bytes());
        let page = &mut data[size..2 * size];
        page[0] = 0x0D;
        page[3..5].copy_from_slice(&(cells.len() as u16).to_be_bytes());
        for (i, c) in cells.iter().enumerate() {
            page[8 + 2 * i..10 + 2 * i].copy_from_slice(&c.to_be_bytes());
        }
        data
    }

    /// A message row `(NULL, 7, 9, blob)` as a record.
    fn message_record(blob: &[u8]) -> Vec<u8> {
        let serial = 2 * blob.len() as u64 + 12;
        let mut types = vec![0, 1, 1];
        match serial < 128 {
            true => types.push(serial as u8),
            false => types.extend([0x80 | (serial >> 7) as u8, (serial & 0x7f) as u8]),
        }
        let mut r = vec![types.len() as u8 + 1];
        r.extend(types);
        r.extend([7, 9]);
        r.extend(blob);
        r
    }

    /// A page whose cell pointer array repeats one cell 200 times gave 200 copies of its row
    /// (all held at once: cell count x payload, up to the file's size each). Each cell is read
    /// once.
    #[test]
    fn a_repeated_cell_pointer_is_read_once() {
        let mut data = db_with_leaf(512, 2, &[450; 200]);
        let record = message_record(&[0xAA, 0xBB]);
        let cell = 512 + 450;
        data[cell] = record.len() as u8;
        data[cell + 1] = 1; // rowid
        data[cell + 2..cell + 2 + record.len()].copy_from_slice(&record);
        let db = DbFile::parse(&data).unwrap();
        let (rows, dropped) = db.message_leaf(2, false).unwrap();
        assert_eq!((rows.len(), dropped), (1, 0));
        assert_eq!(rows[0].data, [0xAA, 0xBB]);
    }

    /// Two cells whose payloads continue on the same overflow page: both were read (a chain
    /// shared by many cells, or looping, is read once per cell). Each overflow page is read
    /// once in the whole file: the second cell is dropped.
    #[test]
    fn an_overflow_page_is_read_once() {
        let mut data = db_with_leaf(512, 3, &[100, 300]);
        let record = message_record(&[0x55; 592]);
        assert_eq!(record.len(), 600);
        // 600 bytes on 512-byte pages: 92 in the leaf, then a pointer to page 3 (508 bytes).
        for (at, rowid) in [(512 + 100, 1u8), (512 + 300, 2)] {
            data[at..at + 2].copy_from_slice(&[0x84, 0x58]); // 600
            data[at + 2] = rowid;
            data[at + 3..at + 3 + 92].copy_from_slice(&record[..92]);
            data[at + 95..at + 99].copy_from_slice(&3u32.to_be_bytes());
        }
        data[1024 + 4..1536].copy_from_slice(&record[92..]);
        let db = DbFile::parse(&data).unwrap();
        let (rows, dropped) = db.message_leaf(2, false).unwrap();
        assert_eq!((rows.len(), dropped), (1, 1));
        assert_eq!(rows[0].data, [0x55; 592]);
    }

    /// 250 distinct cells overlapping in 350 bytes of one page claim 100 bytes each: 25 KB
    /// from an 8 KB file (a 64 KiB page could claim 2 GB so). The payloads copied out are
    /// bounded by the file's length; the salvage stops and says where.
    #[test]
    fn salvaged_bytes_are_bounded_by_the_file() {
        let cells: Vec<u16> = (1000..1250).collect();
        let mut data = db_with_leaf(4096, 2, &cells);
        data[4096 + 1000..].fill(100);
        let db = DbFile::parse(&data).unwrap();
        let rows = db.messages(2);
        assert!(rows.salvaged_bytes <= 8192, "{}", rows.salvaged_bytes);
        let over = rows.over_budget.expect("over the budget");
        assert_eq!((over.page, over.claimed, over.budget), (2, 100, 8192));
        assert!(
            over.to_string().contains("ROSBAG2_RS_MAX_SALVAGE_BYTES"),
            "{over}"
        );
    }
}
