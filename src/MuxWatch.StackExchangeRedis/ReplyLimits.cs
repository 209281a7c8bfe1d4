using System.Collections.Frozen;
using System.Globalization;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// What one poll reply may cost. The client reads a reply whole before anyone sees it, and has no limit
/// of its own; a hostile or broken server can send a 10 MB INFO, a million fields or megabytes of error.
/// So each reply is measured before it is used, one over its limit fails the poll as <c>oversized</c>
/// (saying which command and how big), and the endpoint's polling backs off (<see cref="EndpointPoller"/>),
/// so such a server costs one reply now and then, not one a second.
/// </summary>
/// <remarks>
/// The limits are tens of times what a real server sends: Redis 7's INFO server, persistence and stats
/// are 1-2 KB each with 20-60 fields; its errors are under 200 characters; <c>LATENCY LATEST</c> names at
/// most a few dozen events; <c>SLOWLOG GET n</c> returns at most n entries.
/// </remarks>
internal static class ReplyLimits
{
    /// <summary>Characters of one INFO section's reply.</summary>
    public const int MaxInfoChars = 64 * 1024;

    /// <summary>Fields kept from one INFO section (the size limit allows about 5,000 short ones).</summary>
    public const int MaxInfoFields = 1024;

    /// <summary>Characters of a field's name or value kept; a longer one is not a field MuxWatch reads.</summary>
    public const int MaxInfoFieldChars = 256;

    /// <summary>Characters of an error reply.</summary>
    public const int MaxErrorChars = 4 * 1024;

    /// <summary>Entries of a <c>LATENCY LATEST</c> or <c>LATENCY HISTORY</c> reply (Redis keeps 160 samples per event).</summary>
    public const int MaxLatencyEntries = 256;

    /// <summary>
    /// Characters of all the event names of one <c>LATENCY LATEST</c> reply: Redis names its events in a few words
    /// (<c>command</c>, <c>fork</c>, <c>expire-cycle</c>, about 20 of them), so 16 KiB is far beyond any real one.
    /// </summary>
    public const int MaxLatencyNameChars = 16 * 1024;

    /// <summary>
    /// Characters of a <c>CLUSTER NODES</c> reply: a node's line is 100-200 characters (more for a primary
    /// with scattered slot ranges), so a thousand-node cluster lists in about 200 KB.
    /// </summary>
    public const int MaxClusterNodesChars = 1024 * 1024;

    /// <summary>Nodes read from one <c>CLUSTER NODES</c> reply (Redis advises at most a thousand).</summary>
    public const int MaxClusterNodes = 4096;

    /// <summary>
    /// True when a node's member list (<paramref name="parsed"/> addresses, <see cref="ParseClusterNodes"/>) accounts for
    /// every node its <c>cluster_known_nodes</c> counts (or reached <see cref="MaxClusterNodes"/>). A node still in the
    /// handshake, or without an address, is counted but not listed: such a list is read again at the next poll, not a
    /// minute later, or a node just added would pass as one that left its cluster until then (seen: the sidecar stopped
    /// watching a node added a few seconds before).
    /// </summary>
    public static bool ListsEveryKnownNode(string? knownNodes, int parsed) =>
        parsed >= MaxClusterNodes
        || (int.TryParse(knownNodes, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out var known) && parsed >= known);

    /// <summary>
    /// The endpoints (<c>ip:port</c>, written as <see cref="EndpointText"/> writes the client's) of the nodes a
    /// <c>CLUSTER NODES</c> reply lists, within the limits above; a node still in handshake or without an
    /// address is no member yet.
    /// </summary>
    /// <remarks>
    /// Written here: the client's typed <c>ClusterNodesAsync</c> parses a reply of any size whole (every
    /// slot range of every node) before its caller can look; only the first three fields are needed.
    /// </remarks>
    public static List<string> ParseClusterNodes(string text)
    {
        var members = new List<string>();
        Span<Range> fields = stackalloc Range[4];
        foreach (var range in text.AsSpan().Split('\n'))
        {
            var line = text.AsSpan(range).TrimEnd('\r');
            if (line.Split(fields, ' ') < 3)
            {
                continue;
            }

            var address = line[fields[1]];
            var flags = line[fields[2]];
            if (flags.Contains("handshake", StringComparison.Ordinal) || flags.Contains("noaddr", StringComparison.Ordinal))
            {
                continue;
            }

            // ip:port@cport[,hostname]
            var at = address.IndexOfAny('@', ',');
            if (System.Net.IPEndPoint.TryParse(at < 0 ? address : address[..at], out var endpoint) && endpoint.Port > 0)
            {
                members.Add(EndpointText.Of(endpoint));
                if (members.Count >= MaxClusterNodes)
                {
                    break;
                }
            }
        }

        return members;
    }

    /// <summary>
    /// Splits an INFO reply into its <c>name:value</c> fields, within the limits above; only those in <paramref name="only"/>
    /// when it is given (a poll keeps <see cref="MuxWatch.Model.ServerPollResult.InfoFields"/>).
    /// </summary>
    /// <remarks>
    /// Written here rather than taken from the client's typed <c>InfoAsync</c>: that call turns a reply of
    /// any size into a grouping of every line before its caller can look at it (1.2 GB measured for a
    /// million fields); <c>InfoRawAsync</c> hands the text over, whose size is checked first.
    /// </remarks>
    public static Dictionary<string, string> ParseInfo(string text, Dictionary<string, string> into, FrozenSet<string>? only = null)
    {
        var fields = 0;
        var wanted = only?.GetAlternateLookup<ReadOnlySpan<char>>();
        foreach (var range in text.AsSpan().Split('\n'))
        {
            var line = text.AsSpan(range).TrimEnd('\r');
            var colon = line.IndexOf(':');
            if (line.IsEmpty || line[0] == '#' || colon <= 0 || colon > MaxInfoFieldChars || line.Length - colon - 1 > MaxInfoFieldChars)
            {
                continue;
            }

            string name;
            if (wanted is { } lookup)
            {
                // The field's name as the set holds it: a field not read allocates nothing.
                if (!lookup.TryGetValue(line[..colon], out name!))
                {
                    continue;
                }
            }
            else
            {
                name = line[..colon].ToString();
            }

            into[name] = line[(colon + 1)..].ToString();
            if (++fields >= MaxInfoFields)
            {
                break;
            }
        }

        return into;
    }

    /// <summary>The poll error for a reply over its limit.</summary>
    public static string Oversized(string command, long size, long limit, TimeSpan backoff) => string.Create(CultureInfo.InvariantCulture,
        $"{command}: the server's reply was {size:N0} characters, over the {limit:N0} a poll reads; polling this endpoint backs off to every {backoff.TotalSeconds:N0} s until a reply fits");
}
