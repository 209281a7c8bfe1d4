using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// Names the sender of a slow-log entry when it is a connection MuxWatch knows: a watched multiplexer, by the
/// client name it gives the server (the one configured, or the client's default, the machine's name and the
/// library's version), or MuxWatch's own poller. Redis records the name with each entry (4.0 and later); the
/// address alone would need <c>CLIENT LIST</c> at the moment of the command, which MuxWatch does not ask for.
/// </summary>
/// <remarks>
/// Each answer is remembered per endpoint and client name until the watched multiplexers change or a minute passes
/// (a multiplexer's servers can change under it: a cluster's nodes): every poll reads the newest entries again, and
/// working each one out anew cost a scan of every watched multiplexer per entry, which at 500 endpoints of one
/// sidecar, each a multiplexer, is quadratic (measured: a few percent of the sidecar's CPU with one entry a server;
/// a full slow log is 64 entries a poll).
/// </remarks>
internal sealed class SlowlogSenders(WatchedMultiplexers multiplexers, TimeProvider time)
{
    /// <summary>The most multiplexers named in one answer; more share the name and are counted.</summary>
    private const int MaxNamed = 3;

    /// <summary>How long an answer is remembered while the watched multiplexers stay the same.</summary>
    internal static readonly TimeSpan Remembered = TimeSpan.FromMinutes(1);

    /// <summary>The most answers remembered (a client name is the server's text: a hostile one can send many); past it, all are forgotten.</summary>
    internal const int MaxRemembered = 4096;

    private readonly Lock _gate = new();
    private readonly Dictionary<(string Endpoint, string ClientName), Sender> _answers = [];
    private IReadOnlyList<WatchedMultiplexer>? _answeredFor;
    private DateTimeOffset _answeredSince;

    /// <summary>
    /// How MuxWatch knows the client named <paramref name="clientName"/> that sent a command to
    /// <paramref name="endpoint"/>; null when it does not. Only multiplexers connected to that server are
    /// candidates: an app's multiplexers to other servers often share the client's default name.
    /// </summary>
    public string? KnownAs(string? clientName, string endpoint) => Of(clientName, endpoint).Text;

    /// <summary>
    /// The watched multiplexer, by its name, that sent a command to <paramref name="endpoint"/> as the client named
    /// <paramref name="clientName"/>, when exactly one matches; null otherwise.
    /// </summary>
    public string? MultiplexerOf(string? clientName, string endpoint) => Of(clientName, endpoint).Multiplexer;

    private Sender Of(string? clientName, string endpoint)
    {
        if (string.IsNullOrEmpty(clientName))
        {
            return default;
        }

        if (clientName == ServerPollProbe.ClientName)
        {
            return new("MuxWatch's own polling connection", null);
        }

        var watched = multiplexers.All;
        var now = time.GetUtcNow();
        lock (_gate)
        {
            if (!ReferenceEquals(watched, _answeredFor) || now - _answeredSince >= Remembered || _answers.Count >= MaxRemembered)
            {
                _answers.Clear();
                (_answeredFor, _answeredSince) = (watched, now);
            }
            else if (_answers.TryGetValue((endpoint, clientName), out var remembered))
            {
                return remembered;
            }
        }

        var answer = WorkOut(watched, clientName, endpoint);
        lock (_gate)
        {
            if (ReferenceEquals(watched, _answeredFor))
            {
                _answers[(endpoint, clientName)] = answer;
            }
        }

        return answer;
    }

    private static Sender WorkOut(IReadOnlyList<WatchedMultiplexer> watched, string clientName, string endpoint)
    {
        var matches = watched.Where(w => w.Multiplexer is { } multiplexer && SentName(multiplexer) == clientName && w.HasEndpoint(endpoint)).ToList();
        if (matches.Count == 0)
        {
            return new(clientName == OwnedConnection.ClientName ? "MuxWatch's own connection" : null, null);
        }

        var owned = matches.All(w => w.Owned);
        var names = string.Join(", ", matches.Take(MaxNamed).Select(w => $"'{w.Name}'"));
        var more = matches.Count > MaxNamed ? $" and {matches.Count - MaxNamed} more" : string.Empty;
        var text = (owned, matches.Count) switch
        {
            (true, 1) => $"MuxWatch's own connection to target {names}",
            (true, _) => $"one of MuxWatch's own connections to targets {names}{more}",
            (false, 1) => $"the watched multiplexer {names}",
            (false, _) => $"one of the watched multiplexers {names}{more} (they share the client name)",
        };
        return new(text, matches.Count == 1 ? matches[0].Name : null);
    }

    /// <summary>How a sender is known: the words for it, and the one watched multiplexer it is, when it is exactly one.</summary>
    private readonly record struct Sender(string? Text, string? Multiplexer);

    /// <summary>
    /// The name as the server records it: the client sends its <see cref="IConnectionMultiplexer.ClientName"/> with
    /// <c>CLIENT SETNAME</c>, leaving out what a name cannot hold (spaces and anything outside printable ASCII).
    /// </summary>
    private static string SentName(IConnectionMultiplexer multiplexer)
    {
        string? name;
        try
        {
            name = multiplexer.ClientName;
        }
        catch (ObjectDisposedException)
        {
            return string.Empty;
        }

        return string.IsNullOrEmpty(name) ? string.Empty : new string([.. name.Where(c => c is >= '!' and <= '~')]);
    }
}
