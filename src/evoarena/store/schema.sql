-- evoarena run store: one database per run directory (WAL).
CREATE TABLE IF NOT EXISTS runs (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  spec_json TEXT NOT NULL,
  spec_hash TEXT NOT NULL,
  code_version TEXT NOT NULL,
  evidence TEXT NOT NULL,
  test_hash TEXT,
  isolation TEXT,
  status TEXT NOT NULL,
  started_at TEXT NOT NULL,
  finished_at TEXT
);
CREATE TABLE IF NOT EXISTS cells (
  cell TEXT PRIMARY KEY,
  condition TEXT NOT NULL,
  method TEXT NOT NULL,
  model TEXT NOT NULL,
  seed INTEGER NOT NULL,
  status TEXT NOT NULL,
  current_version TEXT,
  selected_version TEXT,
  budget_json TEXT,
  selection_json TEXT
);
CREATE TABLE IF NOT EXISTS harness_versions (
  id TEXT NOT NULL,
  cell TEXT NOT NULL,
  parent_ids TEXT NOT NULL,
  method TEXT NOT NULL,
  manifest TEXT NOT NULL,
  tree_blob TEXT NOT NULL,
  step TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (cell, id)
);
CREATE TABLE IF NOT EXISTS tasks (
  task_id TEXT PRIMARY KEY,
  split TEXT NOT NULL,
  source_id TEXT NOT NULL,
  payload_hash TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS units (
  cell TEXT NOT NULL,
  key TEXT NOT NULL,
  result TEXT NOT NULL,
  finished_at TEXT NOT NULL,
  PRIMARY KEY (cell, key)
);
CREATE TABLE IF NOT EXISTS attempts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  cell TEXT NOT NULL,
  phase TEXT NOT NULL,
  unit_key TEXT NOT NULL,
  task_id TEXT NOT NULL,
  version_id TEXT NOT NULL,
  answer TEXT,
  score REAL,
  passed INTEGER,
  error TEXT,
  parse_error TEXT,
  output_blob TEXT,
  created_at TEXT NOT NULL,
  call_id INTEGER  -- the calls row that produced this attempt's answer, when known
);
CREATE INDEX IF NOT EXISTS attempts_cell ON attempts (cell, phase);
CREATE TABLE IF NOT EXISTS calls (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  cell TEXT,
  phase TEXT,
  role TEXT NOT NULL,
  model TEXT NOT NULL,
  backend TEXT NOT NULL,
  model_id TEXT NOT NULL,
  params TEXT NOT NULL,
  prompt_hash TEXT NOT NULL,
  cache_key TEXT NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  latency_s REAL NOT NULL,
  cost_usd REAL NOT NULL,
  cached INTEGER NOT NULL,
  retries INTEGER NOT NULL,
  error TEXT,
  created_at TEXT NOT NULL,
  unit TEXT,
  request_blob TEXT,   -- texts digest of [[role, content_digest], ...]; NULL in stores written before texts were kept
  response_blob TEXT,  -- texts digest of {"text", "finish_reason", "logprobs"}; NULL for a provider error
  prompt_format TEXT   -- how the backend turned the messages into a prompt: embedded "chat-template" (the GGUF's
                       -- chat template) or "plain" (text completion); NULL where the backend sends the messages
                       -- as they are (openai: the server applies its template; scripted) or stores written before
  input_tokens_evaluated INTEGER  -- of input_tokens, how many the model computed: the rest were reused from a kept
                                  -- prefix (embedded) or the server's prompt cache (openai `cached_tokens`); 0 for
                                  -- a cache hit; NULL where the backend does not say (scripted, older stores)
);
CREATE INDEX IF NOT EXISTS calls_cell ON calls (cell, role);
CREATE TABLE IF NOT EXISTS events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  ts TEXT NOT NULL,
  cell TEXT,
  kind TEXT NOT NULL,
  payload TEXT NOT NULL,
  unit TEXT
);
-- Content-addressed texts (model call messages and responses): digest = sha256 of the utf-8 text, body = zlib.
CREATE TABLE IF NOT EXISTS texts (
  digest TEXT PRIMARY KEY,
  size INTEGER NOT NULL,
  body BLOB NOT NULL
);
-- Role probes (protocol/probes.py): one row per canned update call a role's model answered before the run; the key
-- digests (method, role, model, probe name, prompt, params), so a resumed run reuses the row.
CREATE TABLE IF NOT EXISTS probes (
  key TEXT PRIMARY KEY,
  method TEXT NOT NULL,
  role TEXT NOT NULL,
  model TEXT NOT NULL,
  probe TEXT NOT NULL,
  conditions TEXT NOT NULL,  -- JSON list of the spec conditions whose update role this probe stands for
  well_formed INTEGER NOT NULL,
  usable INTEGER NOT NULL,
  reason TEXT NOT NULL,
  tokens INTEGER NOT NULL,
  call_id INTEGER,
  error TEXT,
  created_at TEXT NOT NULL
);
