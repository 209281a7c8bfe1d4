using System.Text.Json;

/// <summary>
/// The failures the app's calls caught, each exception object once. The client may hand one connection failure to every
/// call waiting on the connection (2.6.90 fails all its outstanding requests with one <c>RedisConnectionException</c>:
/// seen when 50 calls raced a killed server's closed socket), and MuxWatch counts failures, not the calls they reached
/// (docs/metrics.md, "What is counted"): so does this app's tally it checks MuxWatch against.
/// </summary>
internal sealed class Failures
{
    private readonly HashSet<Exception> _seen = new(ReferenceEqualityComparer.Instance);
    private readonly List<(DateTimeOffset Began, string Message)> _calls = [];

    /// <summary>The distinct failures caught so far.</summary>
    public int Count
    {
        get
        {
            lock (_seen)
            {
                return _seen.Count;
            }
        }
    }

    /// <summary>
    /// Notes a failure a call caught (the same object caught by another call counts once), and when that call began, if
    /// given: the wait as the app itself measured it, which a test holds against what it knows happened (a collection).
    /// </summary>
    public void Note(Exception failure, DateTimeOffset? began = null)
    {
        ArgumentNullException.ThrowIfNull(failure);
        lock (_seen)
        {
            if (_seen.Add(failure) && began is { } start)
            {
                _calls.Add((start, failure.Message));
            }
        }
    }

    /// <summary>Prints each noted call's start and message, one <c>call: </c> line each, as JSON.</summary>
    public void PrintCalls()
    {
        lock (_seen)
        {
            foreach (var (began, message) in _calls)
            {
                Console.WriteLine("call: " + JsonSerializer.Serialize(new { began, message }));
            }
        }
    }
}
