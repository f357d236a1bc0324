"""The check cache: each playbook's compiled result kept by content, and whole checks kept
with the facts they depend on, so that checking an unchanged library reads results
instead of parsing and checking its files again.

An entry is one file in the project's cache directory (the `cache-dir` setting, default
`.xe/cache/`, which holds a `.gitignore` of `*` when it is a folder of its own), sealed
with a key private to the user. The package is in parts so that each process loads only
what it uses:

- `keys`: where the user's sealing key lives, and the fingerprint of this build of the
  checker that every entry's name covers (the sandbox asks where the key is, and loads
  nothing else of the cache);
- `store`: the cache itself (`CheckCache`): entries named, read, sealed and written,
  and the folder cleaned;
- `codec`: the JSON form of a compiled result, and the decoder that refuses what the
  store never writes;
- `facts`: what a file's result depends on besides its bytes (what the plugin catalog
  says about the names it uses, how its text comes from its bytes);
- `replay`: a whole `catalyst check` answered from one entry while every fact its
  findings rest on still holds.

The package's own module holds nothing else: a check run without the cache imports
`replay` (it decides whether there is a cache) and must not load the store.
"""
