namespace MuxWatch.Benchmarks;

/// <summary>Messages shared by the benchmarks.</summary>
internal static class BenchmarkMessages
{
    /// <summary>A short sync timeout, for throws where only the exception's type matters.</summary>
    public const string Timeout = "Timeout performing GET k (5000ms), qs: 1, in: 0";
}
