/// The catalogue's tables, one migration per schema version. `PRAGMA user_version` holds
/// the version a file is at; opening runs the migrations above it, in one transaction
/// each. A file at a version above ``current`` was written by a newer shutterpipe and is
/// refused (its new columns would be lost or misread), with the fix.
enum CatalogueSchema {
    /// The version this build writes.
    static let current = 6

    /// `migrations[n]` takes a file from version n to n + 1.
    static let migrations: [String] = [
        // 0 → 1
        """
        CREATE TABLE sessions(
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            started REAL NOT NULL,
            ended REAL,
            host TEXT
        );
        CREATE TABLE shots(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id INTEGER REFERENCES sessions(id),
            run_number INTEGER,
            trigger TEXT,
            camera TEXT,
            camera_model TEXT,
            camera_serial TEXT,
            camera_port TEXT,
            asked REAL,
            fired REAL,
            stored REAL,
            state TEXT NOT NULL,
            failure_cause TEXT,
            failure_message TEXT,
            exposure_time TEXT,
            aperture REAL,
            iso INTEGER,
            focal_length REAL,
            lens TEXT,
            orientation INTEGER,
            taken TEXT,
            rating INTEGER NOT NULL DEFAULT 0 CHECK (rating BETWEEN 0 AND 5),
            label TEXT,
            pick INTEGER NOT NULL DEFAULT 0 CHECK (pick IN (-1, 0, 1))
        );
        CREATE INDEX shots_by_session ON shots(session_id);
        CREATE INDEX shots_by_moment ON shots(coalesce(fired, stored, asked));
        CREATE TABLE files(
            id INTEGER PRIMARY KEY,
            shot_id INTEGER NOT NULL REFERENCES shots(id) ON DELETE CASCADE,
            path TEXT NOT NULL UNIQUE,
            size INTEGER NOT NULL,
            kind TEXT NOT NULL,
            sha256 TEXT,
            camera_file TEXT,
            missing INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX files_by_shot ON files(shot_id);
        CREATE TABLE keywords(
            shot_id INTEGER NOT NULL REFERENCES shots(id) ON DELETE CASCADE,
            keyword TEXT NOT NULL,
            PRIMARY KEY (shot_id, keyword)
        );
        CREATE TABLE settings(
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
        """,
        // 1 → 2: the shot's identity as the session gave it (``ShotID``, `RUN#NUMBER`),
        // so that a running session and the catalogue name a shot alike.
        """
        ALTER TABLE shots ADD COLUMN shot_key TEXT;
        CREATE UNIQUE INDEX shots_by_key ON shots(shot_key);
        """,
        // 2 → 3: the session label the shot was taken under (an order number, a scanned
        // code), apart from `label`, the colour label of the marks.
        """
        ALTER TABLE shots ADD COLUMN session_label TEXT;
        CREATE INDEX shots_by_session_label ON shots(session_label);
        """,
        // 3 → 4: the copies made of each file after its answer (mirrors, uploads).
        """
        CREATE TABLE copies(
            file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            destination TEXT NOT NULL,
            location TEXT,
            time REAL NOT NULL,
            PRIMARY KEY (file_id, destination)
        );
        """,
        // 4 → 5: frames. A shot of several cameras holds a frame per camera, each marked on
        // its own; a file says whose frame it is. The shot's own marks sum its frames up
        // (``CatalogueFrame/summary(of:)``). Shots recorded before are one frame each, of
        // no camera (''), with the shot's marks.
        """
        ALTER TABLE files ADD COLUMN camera TEXT;
        CREATE TABLE frames(
            id INTEGER PRIMARY KEY,
            shot_id INTEGER NOT NULL REFERENCES shots(id) ON DELETE CASCADE,
            camera TEXT NOT NULL,
            rating INTEGER NOT NULL DEFAULT 0 CHECK (rating BETWEEN 0 AND 5),
            label TEXT,
            pick INTEGER NOT NULL DEFAULT 0 CHECK (pick IN (-1, 0, 1)),
            UNIQUE (shot_id, camera)
        );
        INSERT INTO frames(shot_id, camera, rating, label, pick) SELECT id, '', rating, label, pick FROM shots;
        """,
        // 5 → 6: a frame's place in a sequence (``CatalogueSequencePlace``): the frames of
        // one run of a sequence in a session run are one group.
        """
        ALTER TABLE shots ADD COLUMN sequence_name TEXT;
        ALTER TABLE shots ADD COLUMN sequence_kind TEXT;
        ALTER TABLE shots ADD COLUMN sequence_run INTEGER;
        ALTER TABLE shots ADD COLUMN sequence_index INTEGER;
        ALTER TABLE shots ADD COLUMN sequence_count INTEGER;
        ALTER TABLE shots ADD COLUMN sequence_setting TEXT;
        ALTER TABLE shots ADD COLUMN sequence_value TEXT;
        ALTER TABLE shots ADD COLUMN sequence_ev REAL;
        CREATE INDEX shots_by_sequence ON shots(session_id, sequence_name, sequence_run, sequence_index);
        """,
    ]
}
