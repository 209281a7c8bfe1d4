using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>One multiplexer to watch: its name and how to get it.</summary>
/// <param name="Name">The <c>multiplexer</c> label and the name in <c>/api/targets</c>.</param>
/// <param name="Resolve">Gets the multiplexer; may block (an app's factory may connect), so it is called off the probe loop.</param>
/// <param name="Owned">True when MuxWatch creates it and so disposes of it; false for the app's own, which is only observed.</param>
/// <param name="DisplayConfiguration">Its configuration for display, password removed, when known before it is resolved.</param>
internal sealed record MultiplexerRegistration(
    string Name,
    Func<IServiceProvider, Task<IConnectionMultiplexer>> Resolve,
    bool Owned,
    string? DisplayConfiguration)
{
    /// <summary>A registration for a connection string: MuxWatch connects in the background, never failing start-up.</summary>
    public static MultiplexerRegistration ForConnectionString(string name, string connectionString)
    {
        var options = OwnedConnection.Parse(connectionString);
        return new MultiplexerRegistration(name, _ => OwnedConnection.ConnectAsync(options), Owned: true, options.ToString(includePassword: false));
    }
}
