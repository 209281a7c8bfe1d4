namespace MuxWatch.Testing;

/// <summary>
/// A clock that moves only when a test moves it (Microsoft.Extensions.TimeProvider.Testing is not
/// served by this build's registry, and only the wall clock is needed here).
/// </summary>
public sealed class ManualTimeProvider(DateTimeOffset start) : TimeProvider
{
    private DateTimeOffset _now = start;

    /// <inheritdoc />
    public override DateTimeOffset GetUtcNow() => _now;

    /// <summary>Moves the clock forward.</summary>
    public void Advance(TimeSpan by) => _now += by;
}
