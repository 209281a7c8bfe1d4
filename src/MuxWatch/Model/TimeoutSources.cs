namespace MuxWatch.Model;

/// <summary>The sources a timeout can come from: a small fixed set, so that it can label a metric.</summary>
public static class TimeoutSources
{
    /// <summary>Caught in-process by the first-chance hook: the app's own call timed out.</summary>
    public const string FirstChance = "first-chance";

    /// <summary>MuxWatch's own probe call (PING through a watched multiplexer) timed out.</summary>
    public const string Probe = "probe";

    /// <summary>Posted to <c>POST /api/timeouts</c>.</summary>
    public const string Api = "api";

    /// <summary>Read by the <c>explain</c> command.</summary>
    public const string Explain = "explain";

    /// <summary>True for the sources that saw the timeout in this process, whose live state (counters, pool) is the timeout's own.</summary>
    public static bool IsInProcess(string source) => source is FirstChance or Probe;
}
