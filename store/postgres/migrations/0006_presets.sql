-- Agent presets (ledger/presets.py), every version kept: a saved change is a new row, a deletion a last row with
-- "deleted": true inside doc. (preset_id, version) names a version for good: attempts record it on "started".

CREATE TABLE presets (
    preset_id  text NOT NULL,
    version    integer NOT NULL CHECK (version >= 1),
    doc        jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (preset_id, version)
);
