"""Run snapshots that cannot be forged quietly: the run key, the seal, the save ledger and big results.

- `run_key.py` finds the secret that seals snapshots (`CATALYST_RUN_KEY`, else a key file
  in the user's config directory, else one in the state directory, with a warning).
- `seal.py` makes and checks a snapshot's seal: an HMAC-SHA256 over its bytes, with short
  per-field digests inside it, so that a refusal can name what was edited.
- `ledger.py` keeps the latest save number of every run outside the snapshot, so an
  older copy put back (a rollback) is noticed.
- `results.py` keeps step results too big for the snapshot beside it, named by hash.

`store.py` (the store) is their one user.
"""
