-- Spend limits per person (key: the person id, or '*' for everyone's default), shared by every instance on this
-- database. A NULL column is no cap of that kind. The ledger never holds them: what was spent is folded from it.

CREATE TABLE spend_limits (
    key          text PRIMARY KEY,
    day_usd      double precision CHECK (day_usd >= 0),
    month_usd    double precision CHECK (month_usd >= 0),
    day_tokens   bigint CHECK (day_tokens >= 0),
    month_tokens bigint CHECK (month_tokens >= 0)
);
