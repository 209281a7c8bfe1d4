namespace MuxWatch.Model;

/// <summary>
/// The timeouts of one endpoint that overlapped in time, however many: one spike, one thing to look at. Holds
/// counts, the timeouts' ids and the few lines that name a culprit, never the timeouts' own text.
/// </summary>
/// <param name="Id">Numbers the incidents from 1.</param>
/// <param name="Endpoint">The endpoint its timeouts waited for (<c>unknown</c> when their messages named none).</param>
/// <param name="Start">When its first request started waiting.</param>
/// <param name="LastTimeout">When its latest timeout was raised.</param>
/// <param name="Open">True until its endpoint has been quiet for the incident's quiet time: a later timeout still joins it.</param>
public sealed record Incident(long Id, string Endpoint, DateTimeOffset Start, DateTimeOffset LastTimeout, bool Open)
{
    /// <summary>When it ended: its last timeout, once the quiet time has passed; null while open.</summary>
    public DateTimeOffset? End => Open ? null : LastTimeout;

    /// <summary>Its timeouts, settled or not.</summary>
    public int Timeouts { get; init; }

    /// <summary>Those whose diagnosis still waits for the server's next poll.</summary>
    public int Settling { get; init; }

    /// <summary>The settled ones by their final cause (kebab-case names), the most first.</summary>
    public IReadOnlyDictionary<string, int> ByCause { get; init; } = new Dictionary<string, int>();

    /// <summary>The cause of most of its settled timeouts; null while none has settled.</summary>
    public TimeoutCause? Cause { get; init; }

    /// <summary>What to do first: the advice of the main cause, as its latest timeout gave it (a huge key's name and size, ...).</summary>
    public string? FirstStep { get; init; }

    /// <summary>The evidence lines that name a culprit (who sent the slow command, which value was huge), each once.</summary>
    public IReadOnlyList<string> Culprits { get; init; } = [];

    /// <summary>The ids of its timeouts (<c>GET {api}/timeouts/{id}</c>), the first ones up to a bound.</summary>
    public IReadOnlyList<long> TimeoutIds { get; init; } = [];

    /// <summary>
    /// What the other instances saw of the endpoint over the incident's span, weighed against its cause; null unless
    /// <c>MuxWatch:FleetPrometheusUrl</c> is set, and until the minute after its last timeout has been read.
    /// </summary>
    public FleetReading? Fleet { get; init; }
}
