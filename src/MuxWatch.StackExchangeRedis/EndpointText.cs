using System.Globalization;
using System.Net;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// Writes an endpoint as <c>host:port</c>, as the client's timeout messages write <c>serverEndpoint</c>,
/// so that a caught message and a probed server name the same endpoint the same way.
/// (<see cref="DnsEndPoint.ToString"/> would write <c>Unspecified/host:port</c>.)
/// </summary>
internal static class EndpointText
{
    public static string Of(EndPoint? endpoint) => endpoint switch
    {
        null => "unknown",
        DnsEndPoint dns => string.Create(CultureInfo.InvariantCulture, $"{dns.Host}:{dns.Port}"),
        IPEndPoint ip => ip.ToString(),
        _ => endpoint.ToString() ?? "unknown",
    };
}
