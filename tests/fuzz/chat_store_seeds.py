#!/usr/bin/env python3
"""Seeds of the chat-store harness: saved-chat databases as KVScope writes them (schema 2,
WAL), a version-1 one, one with a chat this version cannot read, one of a newer layout.
   tests/fuzz/chat_store_seeds.py OUT_DIR"""
import os
import sqlite3
import sys

V1 = [
    "CREATE TABLE chats(id INTEGER PRIMARY KEY, title TEXT NOT NULL, system_prompt TEXT NOT "
    "NULL, sampling TEXT NOT NULL, created_ms INTEGER NOT NULL, updated_ms INTEGER NOT NULL)",
    "CREATE TABLE messages(chat_id INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE, "
    "position INTEGER NOT NULL, role TEXT NOT NULL, text TEXT NOT NULL, state TEXT NOT NULL, "
    "note TEXT NOT NULL, created_ms INTEGER NOT NULL, PRIMARY KEY(chat_id, position))",
]
V2 = [
    "ALTER TABLE chats ADD COLUMN model_path TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE chats ADD COLUMN model_name TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE chats ADD COLUMN model_size INTEGER NOT NULL DEFAULT -1",
    "ALTER TABLE chats ADD COLUMN model_mtime_ms INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE messages ADD COLUMN prompt_tokens INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE messages ADD COLUMN tokens INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE messages ADD COLUMN decode_seconds REAL NOT NULL DEFAULT 0",
    "ALTER TABLE messages ADD COLUMN finish_reason TEXT NOT NULL DEFAULT ''",
]
SAMPLING = '{"temperature":0.7,"top_k":40,"top_p":0.95,"seed":"42","max_tokens":256}'


def write(path, statements, version, wal=False):
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    if wal:
        db.execute("PRAGMA journal_mode=WAL")
    for sql in statements:
        db.execute(sql)
    db.execute(f"PRAGMA user_version={version}")
    db.commit()
    db.close()  # the last close folds the WAL back into the file


def chats(with_model_columns):
    rows = []
    for chat in (1, 2):
        extra = ", '/m/a.gguf', 'a.gguf', 1234, 5678" if with_model_columns else ""
        rows.append(f"INSERT INTO chats VALUES({chat}, 'Chat {chat}', 'Be brief.', "
                    f"'{SAMPLING}', 100, 200{extra})")
        for pos, (role, text) in enumerate([("user", "Hi \u00e9"), ("assistant", "Hello")]):
            extra = ", 11, 3, 0.5, 'end of generation'" if with_model_columns else ""
            rows.append(f"INSERT INTO messages VALUES({chat}, {pos}, '{role}', '{text}', "
                        f"'done', '', 150{extra})")
    return rows


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    write(f"{out}/v2.sqlite", V1 + V2 + chats(True), 2, wal=True)
    write(f"{out}/v1.sqlite", V1 + chats(False), 1)
    write(f"{out}/unreadable.sqlite", V1 + V2 + chats(True) + [
        "INSERT INTO chats(id, title, system_prompt, sampling, created_ms, updated_ms) "
        "VALUES(7, 'tool', '', '{\"temperature\":-1}', 0, 0)",
        "INSERT INTO messages(chat_id, position, role, text, state, note, created_ms) "
        "VALUES(7, 0, 'tool', 'x', 'pending', '', 0)"], 2)
    write(f"{out}/newer.sqlite", [
        "CREATE TABLE chats(id INTEGER PRIMARY KEY, title TEXT, folder TEXT, icon BLOB)",
        "CREATE TABLE messages(chat_id INTEGER, position INTEGER, author TEXT, parts TEXT)",
        "INSERT INTO chats VALUES(9, 'Trip', 'travel', x'00ff')",
        "INSERT INTO messages VALUES(9, 0, 'user', 'first')"], 7)


if __name__ == "__main__":
    main()
