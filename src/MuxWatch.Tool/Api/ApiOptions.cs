namespace MuxWatch.Tool.Api;

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

    /// <summary>How long a POST body may take to arrive before it is answered 408 (default 10 s, 1 s to 5 minutes).</summary>
    public TimeSpan BodyReadTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>When set, <c>/api/*</c> answers only on this port (list it in <c>Urls</c> too); other ports answer 404.</summary>
    public int? Port { get; set; }

    /// <summary>Connections the server keeps open at once (default 1000, 10 to 100000); more are closed at once, so a flood of idle sockets cannot exhaust file descriptors.</summary>
    public int MaxConnections { get; set; } = 1000;
}
