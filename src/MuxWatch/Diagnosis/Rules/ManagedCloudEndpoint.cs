using MuxWatch.Model;

namespace MuxWatch.Diagnosis.Rules;

/// <summary>
/// A managed Redis reached over the network (Azure, AWS, Alibaba Cloud, Redis Cloud, Upstash), known by its
/// endpoint's host name. With a modest pool and a few KB arriving, the maintainers read a timeout to such an
/// endpoint as the round trip to the provider, not the pool: "It looks like you're connecting to a remote cloud
/// endpoint ... The thread count of 15 doesn't appear that busy ... it seems more likely you have a general
/// latency issue to the provider and 5000ms may be too low" (issue #1223). A suffix list kept by hand: no
/// library knows which hosts are managed caches.
/// </summary>
internal static class ManagedCloudEndpoint
{
    /// <summary>Busy worker threads below which a pool counts as modest for such an endpoint ("15 doesn't appear that busy").</summary>
    public const int ModestPoolThreads = 20;

    private static readonly string[] Suffixes =
    [
        ".cache.windows.net", ".redis.cache.windows.net", ".redisenterprise.cache.azure.net", ".redis.azure.net",
        ".cache.amazonaws.com", ".cache.amazonaws.com.cn", ".rds.aliyuncs.com", ".redis.rds.aliyuncs.com",
        ".redis-cloud.com", ".redislabs.com", ".upstash.io",
    ];

    /// <summary>The host of the message's endpoint when it is a managed cache, else null.</summary>
    public static string? Of(RedisErrorReport report)
    {
        if (report.Endpoint is not { } endpoint)
        {
            return null;
        }

        var host = endpoint.StartsWith("Unspecified/", StringComparison.Ordinal) ? endpoint["Unspecified/".Length..] : endpoint;
        var colon = host.LastIndexOf(':');
        host = colon > 0 ? host[..colon] : host;
        return Suffixes.Any(suffix => host.EndsWith(suffix, StringComparison.OrdinalIgnoreCase)) ? host : null;
    }

    /// <summary>
    /// True when the message is the maintainers' case: a managed cache, requests unanswered (<c>qs</c> above 0), a
    /// modest pool (fewer than <see cref="ModestPoolThreads"/> worker and I/O threads busy), at most a few KB arriving,
    /// and the reader waiting for bytes (<c>rs: ReadAsync</c>, or not said): a reader busy dequeuing results is the client's.
    /// </summary>
    public static bool IsLatencyToProvider(RedisErrorReport report) =>
        Of(report) is not null
        && report.Number("qs") is > 0
        && report.Field("WORKER")?.Part("Busy") is { } busy && busy < ModestPoolThreads
        && (report.Field("IOCP")?.Part("Busy") ?? 0) < ModestPoolThreads
        && report.Field("rs")?.Raw is null or "ReadAsync"
        && (report.Number("in") ?? 0) < Thresholds.ArrivingReplyBytes
        && report.Number("inbound") is null or < Thresholds.LargeTransferKiB;
}
