using MuxWatch.Testing;

// The classes that take minutes whoever runs beside them (the end-to-end ones, the native publish) start first, the
// rest beside them (xunit.runner.json lets twice as many classes as cores run at once: most of them wait on processes).
[assembly: TestCollectionOrderer("MuxWatch.Testing." + nameof(StartsFirstOrderer), "MuxWatch.Testing")]
