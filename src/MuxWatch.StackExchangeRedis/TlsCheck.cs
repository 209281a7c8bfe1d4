using System.Net.Security;
using System.Security.Cryptography.X509Certificates;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// Validates a TLS target's certificate for a connection MuxWatch makes, trusting the system's roots and,
/// when configured, the CA certificates of the user's (<c>MuxWatch:Targets:N:TrustedCaFile</c>: a root, an
/// intermediate, or a bundle), and keeps why a certificate was refused, so <c>/api/targets</c> and the log can
/// say so instead of a bare failure type.
/// </summary>
/// <remarks>
/// Written here rather than with the client's <c>ConfigurationOptions.TrustIssuer</c>, which installs a
/// callback of its own in place of any other: the reason for a refusal would be lost. The chain is built
/// by .NET's <see cref="X509Chain"/> from the server's certificate and the intermediates it presented (most
/// CAs, Azure's and AWS's among them, issue from an intermediate), up to a configured root as a custom root;
/// a configured certificate that is not self-signed (an intermediate) is trusted as an anchor too, as
/// <c>openssl verify -partial_chain</c> trusts it. Every certificate on the way must be valid now. Nothing
/// about a certificate is secret, and no key or password is ever part of the reason.
/// </remarks>
internal sealed class TlsCheck(X509Certificate2Collection? trustedCa, string trustedCaSetting)
{
    private string? _failure;
    private int _failureIsNew;

    /// <summary>Why the latest certificate was refused, or null when the latest was accepted.</summary>
    public string? LastFailure => Volatile.Read(ref _failure);

    /// <summary>A refusal not yet reported: returned once.</summary>
    public string? TakeNewFailure() => Interlocked.Exchange(ref _failureIsNew, 0) == 1 ? LastFailure : null;

    /// <summary>A check with the same trust for another connection (the witness's), keeping its refusals apart from this one's.</summary>
    public TlsCheck ForAnotherConnection() => new(trustedCa, trustedCaSetting);

    /// <summary>The client's <c>CertificateValidation</c> callback.</summary>
    public bool Validate(object sender, X509Certificate? certificate, X509Chain? chain, SslPolicyErrors errors)
    {
        var failure = Reason(certificate, chain, errors);
        Volatile.Write(ref _failure, failure);
        if (failure is not null)
        {
            Interlocked.Exchange(ref _failureIsNew, 1);
        }

        return failure is null;
    }

    private string? Reason(X509Certificate? certificate, X509Chain? chain, SslPolicyErrors errors)
    {
        if (errors == SslPolicyErrors.None)
        {
            return null;
        }

        if (certificate is null || errors.HasFlag(SslPolicyErrors.RemoteCertificateNotAvailable))
        {
            return "TLS: the server presented no certificate";
        }

        var reasons = new List<string>();
        if (errors.HasFlag(SslPolicyErrors.RemoteCertificateNameMismatch))
        {
            reasons.Add("its certificate does not name the host connected to (RemoteCertificateNameMismatch; sslHost= in the connection string sets the name to expect)");
        }

        if (errors.HasFlag(SslPolicyErrors.RemoteCertificateChainErrors) && ChainProblem(certificate, chain) is { } problem)
        {
            reasons.Add(problem);
        }

        return reasons.Count == 0 ? null : "TLS: the server's certificate was refused: " + string.Join("; ", reasons);
    }

    private static string Words(X509ChainStatusFlags status) => status switch
    {
        X509ChainStatusFlags.PartialChain => "signed by a CA not known here: PartialChain",
        X509ChainStatusFlags.UntrustedRoot => "its root CA is not trusted: UntrustedRoot",
        X509ChainStatusFlags.NotTimeValid => "expired or not yet valid: NotTimeValid",
        X509ChainStatusFlags.NotValidForUsage => "not for server authentication: NotValidForUsage",
        _ => status.ToString(),
    };

    /// <summary>Null when the certificate chains to a configured CA; else what is wrong with its chain.</summary>
    /// <param name="certificate">The server's certificate.</param>
    /// <param name="presented">The chain the TLS stack built, which holds the intermediates the server sent.</param>
    private string? ChainProblem(X509Certificate certificate, X509Chain? presented)
    {
        using var leaf = new X509Certificate2(certificate);
        using var chain = new X509Chain();
        chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        if (presented is not null)
        {
            foreach (var element in presented.ChainElements)
            {
                chain.ChainPolicy.ExtraStore.Add(element.Certificate); // the intermediates the server sent
            }

            chain.ChainPolicy.ExtraStore.AddRange(presented.ChainPolicy.ExtraStore);
        }
        List<X509Certificate2> anchors = [];
        if (trustedCa is { Count: > 0 })
        {
            chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
            foreach (var ca in trustedCa)
            {
                if (ca.SubjectName.RawData.AsSpan().SequenceEqual(ca.IssuerName.RawData))
                {
                    chain.ChainPolicy.CustomTrustStore.Add(ca); // a root
                }
                else
                {
                    chain.ChainPolicy.ExtraStore.Add(ca); // an intermediate: on the way, and an anchor of its own (below)
                    anchors.Add(ca);
                }
            }
        }

        if (chain.Build(leaf) || AnchoredAtIntermediate(chain, anchors))
        {
            return null;
        }

        var found = chain.ChainStatus.Select(s => Words(s.Status)).ToList();
        var now = DateTime.Now;
        if (chain.ChainElements.Any(e => now < e.Certificate.NotBefore || now > e.Certificate.NotAfter))
        {
            found.Insert(0, Words(X509ChainStatusFlags.NotTimeValid)); // see AnchoredAtIntermediate: not always reported
        }

        var statuses = string.Join(", ", found.Distinct());
        return trustedCa is null
            ? $"its certificate is not trusted here ({statuses}); set {trustedCaSetting} to the CA that signed it"
            : $"its certificate does not chain to the CA in {trustedCaSetting} ({statuses})";
    }

    /// <summary>
    /// True when the chain reaches a configured intermediate and everything from the server's certificate up to it
    /// is valid (above it, only the missing or untrusted root may fail): the intermediate is the trust anchor.
    /// </summary>
    /// <remarks>
    /// Each certificate's dates are checked here too: .NET reports no <c>NotTimeValid</c> on a chain it could not
    /// complete (measured: an expired intermediate under no root showed only <c>PartialChain</c>).
    /// </remarks>
    private static bool AnchoredAtIntermediate(X509Chain chain, List<X509Certificate2> anchors)
    {
        if (anchors.Count == 0)
        {
            return false;
        }

        var now = DateTime.Now; // NotBefore and NotAfter are local times
        foreach (var element in chain.ChainElements)
        {
            if (element.ChainElementStatus.Any(s => s.Status is not (X509ChainStatusFlags.PartialChain or X509ChainStatusFlags.UntrustedRoot or X509ChainStatusFlags.NoError))
                || now < element.Certificate.NotBefore || now > element.Certificate.NotAfter)
            {
                return false; // expired, not for this use, a bad signature: on the way to the anchor, refused
            }

            if (anchors.Any(anchor => anchor.RawDataMemory.Span.SequenceEqual(element.Certificate.RawDataMemory.Span)))
            {
                return true;
            }
        }

        return false;
    }
}
