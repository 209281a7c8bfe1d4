namespace MuxWatch.Export;

/// <summary>
/// Admits at most a fixed number of distinct values for one label, like <see cref="BoundedLabelValues"/>,
/// but a value unused for <c>maxIdle</c> gives its place up when a new one needs it: whoever can post
/// made-up endpoints takes places for an hour, never for ever. The caller removes the freed value's series.
/// </summary>
/// <remarks>Posts arrive at most a few thousand a second: one lock is cheaper than being clever.</remarks>
internal sealed class AgingLabelValues(int capacity, TimeSpan maxIdle)
{
    private readonly Dictionary<string, DateTimeOffset> _lastUsed = new(StringComparer.Ordinal);
    private readonly Lock _gate = new();

    /// <summary>
    /// <paramref name="value"/> if admitted (or a place is free, or one idle past <c>maxIdle</c> can be freed:
    /// <paramref name="freed"/> then names it), else <see cref="BoundedLabelValues.Other"/>.
    /// </summary>
    public string Admit(string value, DateTimeOffset now, out string? freed)
    {
        freed = null;
        lock (_gate)
        {
            if (_lastUsed.ContainsKey(value))
            {
                _lastUsed[value] = now;
                return value;
            }

            if (_lastUsed.Count >= capacity)
            {
                var (stalest, used) = _lastUsed.MinBy(entry => entry.Value);
                if (now - used < maxIdle)
                {
                    return BoundedLabelValues.Other;
                }

                _lastUsed.Remove(stalest);
                freed = stalest;
            }

            _lastUsed[value] = now;
            return value;
        }
    }
}
