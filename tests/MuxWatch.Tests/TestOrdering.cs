using MuxWatch.Testing;

// The test classes that take minutes start first (LongestFirst's remarks).
[assembly: TestCollectionOrderer(LongestFirst.TypeName, LongestFirst.AssemblyName)]
