"""The bottom layer every loop family stands on (docs/architecture.md):

- `loop`: the Loop protocol (`Loop`; it re-exports the names of the next three);
  `acts`: what a loop hands out and the shared rules (`Act`, `Status`, `Snapshot`,
  `Cap`, `Verdict`, `Transition`, `check_caps`, `require_role`); `stamping`: an act's
  events stamped and handed to the sink (`stamp_events`, `appender`, `append_events`);
  `pending`: the contract built when first read; `quickinit`: `quick_init`;
- `clock`: `utc_now` and `ManualClock`; `sinks`: `EventSink`, `MemoryLedger`;
- `measures`: the measures tuple; `atomic`: `write_atomic`; `examples`: `example_of`
  (an instance of a JSON Schema); `paths`: `path_in` (a path a glob matches) and the
  one safe path helper (`checked_path`, `kind_of`, `existing`, `read_capped`, `inside`);
- `commit`: `StateStore`, a loop's state file and ledger committed together per act,
  under one lock (`turn_lock`, `taking_turn`);
- `bar`: the bar runner (`run_command`, `run_bar`, `BarRun`), with `keeping` (how a
  command is handed to a keeper), `keeper` (the keeper process) and `bar_output`;
- `form`: the Stepper's `Draft` and `FormSpec`; `players`: simulate's `Player`, `Draws`;
- `family`: `LoopFamily`, what a family says about itself (`crewbook.families` finds them);
- `lazy`: `lazy_names`, a package's public names loaded on first use.
- `gc_pause`: `paused_gc`, the cyclic collector paused while a big acyclic result is built.

It imports no concept and no front end.
"""

from __future__ import annotations
