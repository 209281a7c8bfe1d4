namespace MuxWatch.Service.Api;

/// <summary>Limits of <c>POST /api/timeouts</c>, bound from <c>MuxWatch:Api</c>.</summary>
internal sealed class TimeoutsApiOptions
{
    public const string SectionName = "MuxWatch:Api";

    /// <summary>The largest body accepted, in bytes (default 1 MiB).</summary>
    public int MaxBodyBytes { get; set; } = 1024 * 1024;

    /// <summary>The most messages one request may carry (default 10000).</summary>
    public int MaxMessagesPerRequest { get; set; } = 10_000;
}
