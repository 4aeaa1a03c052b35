// Package workloads holds the bookkeeping of notebook 05's experiments (the
// what-if replay of real programs' snapshots) that would stand in the
// reader's way in a cell: reading the runs that ship in
// reference/workloads-2.11 — each program's snapshot under PyTorch 2.11's
// defaults and, for every setting it was recorded under, PyTorch's own
// figures — and replaying a snapshot under a recorded run's setting. The
// notebook's cells show the replays (package whatif) and the comparisons;
// these read the files and format the figures.
//
//   - [Load] reads a shipped snapshot, [ReadRun] what PyTorch measured in a
//     recorded run (its .facts.json), [Settings] the settings every program
//     was recorded under;
//   - [Predict] replays a snapshot under a recorded run's setting and cap,
//     [Agree] counts the figures it got exactly;
//   - [Figures] are the memory_stats keys a prediction is compared on,
//     [Format] prints one;
//   - [Repeats] reads the runs repeated under one setting, [Values] the
//     values PyTorch measured for a figure over them;
//   - [DeferredFrees] counts a trace's frees that waited for another stream.
package workloads
