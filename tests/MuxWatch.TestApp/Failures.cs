/// <summary>
/// The failures the app's calls caught, each exception object once. The client may hand one connection failure to every
/// call waiting on the connection (2.6.90 fails all its outstanding requests with one <c>RedisConnectionException</c>:
/// seen when 50 calls raced a killed server's closed socket), and MuxWatch counts failures, not the calls they reached
/// (docs/metrics.md, "What is counted"): so does this app's tally it checks MuxWatch against.
/// </summary>
internal sealed class Failures
{
    private readonly HashSet<Exception> _seen = new(ReferenceEqualityComparer.Instance);

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

    /// <summary>Notes a failure a call caught (the same object caught by another call counts once).</summary>
    public void Note(Exception failure)
    {
        lock (_seen)
        {
            _seen.Add(failure);
        }
    }
}
