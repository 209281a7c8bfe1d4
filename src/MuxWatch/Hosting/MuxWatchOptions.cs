namespace MuxWatch.Hosting;

/// <summary>Settings of MuxWatch, bound from the <c>MuxWatch</c> configuration section.</summary>
public sealed class MuxWatchOptions
{
    /// <summary>The configuration section these options are bound from.</summary>
    public const string SectionName = "MuxWatch";

    /// <summary>Catch every StackExchange.Redis timeout thrown in this process (default on).</summary>
    public bool CaptureFirstChanceExceptions { get; set; } = true;

    /// <summary>Write each caught timeout's cause and advice to the app's log, at Warning (default on).</summary>
    public bool LogTimeouts { get; set; } = true;

    /// <summary>At most one log line per cause per this interval (default 10 s, 0 to 1 hour); the next line counts those left out.</summary>
    public TimeSpan TimeoutLogInterval { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>How many recent timeouts are kept for <c>/api/timeouts</c> (default 1000, 1 to 100000).</summary>
    public int RecentTimeoutCapacity { get; set; } = 1000;

    /// <summary>How many caught exceptions may wait to be read before more are dropped and counted (default 10000, 1 to 1000000).</summary>
    public int CaptureQueueCapacity { get; set; } = 10_000;
}
