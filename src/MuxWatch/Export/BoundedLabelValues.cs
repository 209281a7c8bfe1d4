using System.Collections.Concurrent;
using System.ComponentModel;

namespace MuxWatch.Export;

/// <summary>
/// Admits at most a fixed number of distinct values for one label; every further value is reported
/// as <see cref="Other"/>. Posted messages can name any endpoint, and a label value is a series for
/// ever: this keeps the series count bounded whatever the input.
/// </summary>
[EditorBrowsable(EditorBrowsableState.Never)] // the probe-package contract (docs/public-api.md): for MuxWatch's own packages, not apps
public sealed class BoundedLabelValues(int capacity)
{
    /// <summary>The value that stands for every value past the bound.</summary>
    internal const string Other = "other";

    private readonly ConcurrentDictionary<string, bool> _admitted = new(StringComparer.Ordinal);
    private int _count;

    /// <summary><paramref name="value"/> if it is admitted (or can still be), else <see cref="Other"/>.</summary>
    public string Admit(string value)
    {
        if (_admitted.ContainsKey(value))
        {
            return value;
        }

        if (Interlocked.Increment(ref _count) > capacity)
        {
            Interlocked.Decrement(ref _count);
            return Other;
        }

        if (!_admitted.TryAdd(value, true))
        {
            Interlocked.Decrement(ref _count);
        }

        return value;
    }

    /// <summary>Frees a value's place (its series were removed).</summary>
    internal void Forget(string value)
    {
        if (_admitted.TryRemove(value, out _))
        {
            Interlocked.Decrement(ref _count);
        }
    }
}
