using System.Globalization;
using System.Net;
using System.Runtime.CompilerServices;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// Writes an endpoint as <c>host:port</c>, as the client's timeout messages write <c>serverEndpoint</c>,
/// so that a caught message and a probed server name the same endpoint the same way.
/// (<see cref="DnsEndPoint.ToString"/> would write <c>Unspecified/host:port</c>.)
/// </summary>
internal static class EndpointText
{
    /// <summary>
    /// The text of each endpoint object the client hands out, kept beside it: the probe asks for every server's text every
    /// cycle (its series, its poller, its timeline), and writing an address anew each time was an allocation per server per
    /// cycle, twice (issue 52). The client keeps one endpoint object per server; one that goes is forgotten with it.
    /// </summary>
    private static readonly ConditionalWeakTable<EndPoint, string> Written = [];

    public static string Of(EndPoint? endpoint) =>
        endpoint is null ? Write(endpoint) : Written.TryGetValue(endpoint, out var text) ? text : Written.GetValue(endpoint, Write);

    private static string Write(EndPoint? endpoint) => endpoint switch
    {
        null => "unknown",
        DnsEndPoint dns => string.Create(CultureInfo.InvariantCulture, $"{dns.Host}:{dns.Port}"),
        IPEndPoint ip => ip.ToString(),
        _ => endpoint.ToString() ?? "unknown",
    };
}
