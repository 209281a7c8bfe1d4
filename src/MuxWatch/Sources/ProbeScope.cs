using System.ComponentModel;

namespace MuxWatch.Sources;

/// <summary>
/// Marks the calls MuxWatch makes itself (its PINGs, the connections it owns), so that the first-chance
/// catcher leaves their exceptions to the probe: the probe records them as its own (source <c>probe</c>),
/// and an app's timeout is never taken for the probe's or the reverse.
/// </summary>
/// <remarks>
/// An <see cref="AsyncLocal{T}"/> flows into the continuations of the probe's awaits, which is where an
/// awaited Redis exception is (re)thrown and the first-chance event is raised.
/// </remarks>
[EditorBrowsable(EditorBrowsableState.Never)] // the probe-package contract (docs/public-api.md): for MuxWatch's own packages, not apps
public static class ProbeScope
{
    private static readonly AsyncLocal<bool> InProbe = new();

    /// <summary>True inside a probe's own call.</summary>
    public static bool IsActive => InProbe.Value;

    /// <summary>Enters the scope until the returned value is disposed.</summary>
    public static Scope Enter()
    {
        var previous = InProbe.Value;
        InProbe.Value = true;
        return new Scope(previous);
    }

    /// <summary>Restores the state from before <see cref="Enter"/>.</summary>
    public readonly struct Scope : IDisposable
    {
        private readonly bool _previous;

        internal Scope(bool previous) => _previous = previous;

        /// <inheritdoc />
        public void Dispose() => InProbe.Value = _previous;
    }
}
