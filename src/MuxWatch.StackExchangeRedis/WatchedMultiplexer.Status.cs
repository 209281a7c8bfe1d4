using MuxWatch.Model;
using MuxWatch.Reading;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>What <c>/api/targets</c> says of this multiplexer: its state, its servers, the client's version.</summary>
internal sealed partial class WatchedMultiplexer
{
    /// <summary>
    /// The client's package version as users know it (3.4.35), from its informational version without build
    /// metadata; the assembly version (3.0.0.0) is only its binding identity.
    /// </summary>
    private static readonly string? ClientVersion =
        System.Reflection.CustomAttributeExtensions.GetCustomAttribute<System.Reflection.AssemblyInformationalVersionAttribute>(typeof(IConnectionMultiplexer).Assembly)?.InformationalVersion.Split('+')[0]
        ?? typeof(IConnectionMultiplexer).Assembly.GetName().Version?.ToString();

    /// <summary>Its status now (secrets redacted): its state, latest probe outcome and each server's, with the server's polling.</summary>
    public TargetStatus Status()
    {
        var multiplexer = Multiplexer;
        var servers = new List<TargetServerStatus>();
        if (multiplexer is not null && !_disposed)
        {
            foreach (var server in Servers(multiplexer))
            {
                var endpoint = EndpointText.Of(server.EndPoint);
                servers.Add(new TargetServerStatus(
                    endpoint,
                    server.IsConnected,
                    server.IsConnected ? server.ServerType.ToString() : null,
                    server.IsConnected ? server.Version.ToString() : null,
                    server.IsReplica ? "replica" : "primary",
                    _endpoints.TryGetValue(endpoint, out var watched) ? watched.LastSuccess : null)
                {
                    Polling = _timelines?.Find(endpoint)?.Status(),
                });
            }
        }

        var error = _outcome.LastError;
        var status = new TargetStatus(
            Name,
            _state,
            _registration.Owned,
            // The client drops the password; the user name is a credential too.
            (_registration.DisplayConfiguration ?? MultiplexerInspection.DisplayConfiguration(multiplexer)) is { } shown ? SecretRedactor.Redact(shown) : null,
            _outcome.LastSuccess,
            error?.Message,
            error?.Time,
            ClientVersion,
            servers);
        return _registration.Discovered is { } discovered ? status with { Discovered = true, MadeBy = discovered.Origin.MadeBy } : status;
    }
}
