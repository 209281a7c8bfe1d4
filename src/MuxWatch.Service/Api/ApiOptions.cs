namespace MuxWatch.Service.Api;

/// <summary>Access and limits of the HTTP API, bound from <c>MuxWatch:Api</c>.</summary>
internal sealed class ApiOptions
{
    public const string SectionName = "MuxWatch:Api";

    /// <summary>When set, every <c>/api/*</c> request must carry <c>Authorization: Bearer &lt;token&gt;</c> (at least 16 characters).</summary>
    public string? BearerToken { get; set; }

    /// <summary>The largest <c>POST /api/timeouts</c> body accepted, in bytes (default 1 MiB).</summary>
    public int MaxBodyBytes { get; set; } = 1024 * 1024;

    /// <summary>The most messages one request may carry (default 10000).</summary>
    public int MaxMessagesPerRequest { get; set; } = 10_000;

    /// <summary>POSTs processed at once; more are refused with 429 at once rather than queued (default 8).</summary>
    public int MaxConcurrentPosts { get; set; } = 8;
}
