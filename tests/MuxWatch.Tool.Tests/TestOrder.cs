using MuxWatch.Testing;

// The end-to-end classes mostly wait for Prometheus and Alertmanager: started first, they wait beside the rest
// (xunit.runner.json lets twice as many classes as cores run at once, since most of them wait on processes).
[assembly: TestCollectionOrderer("MuxWatch.Testing." + nameof(StartsFirstOrderer), "MuxWatch.Testing")]
